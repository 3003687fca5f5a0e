package bans

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"
)

// MaxFileBytes bounds the ban file read at start: MaxBansLimit bans of the
// longest kind fit with room to spare.
const MaxFileBytes = 16 << 20

const fileVersion = 1

type fileBody struct {
	Version int   `json:"version"`
	Bans    []Ban `json:"bans"`
}

// decode reads a ban file of at most MaxFileBytes holding at most maxBans
// bans, each valid, none twice; expired bans are dropped.
func decode(r io.Reader, maxBans int, now time.Time) ([]Ban, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("bans: read: %w", err)
	}
	if len(data) > MaxFileBytes {
		return nil, fmt.Errorf("%w: larger than %d bytes", ErrCorrupt, MaxFileBytes)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var body fileBody
	if err := dec.Decode(&body); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrCorrupt, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("%w: data after the list", ErrCorrupt)
	}
	if body.Version != fileVersion {
		return nil, fmt.Errorf("%w: version %d, this server reads %d", ErrCorrupt, body.Version, fileVersion)
	}
	if len(body.Bans) > maxBans {
		return nil, fmt.Errorf("%w: %d bans, more than the %d allowed (-bans-max)", ErrCorrupt, len(body.Bans), maxBans)
	}
	seen := make(map[string]bool, len(body.Bans))
	out := body.Bans[:0]
	for i, b := range body.Bans {
		if err := b.validate(); err != nil {
			return nil, fmt.Errorf("%w: ban %d: %w", ErrCorrupt, i, err)
		}
		if seen[b.ID] {
			return nil, fmt.Errorf("%w: ban %q twice", ErrCorrupt, b.ID)
		}
		seen[b.ID] = true
		if b.Expires.After(now) {
			out = append(out, b)
		}
	}
	return out, nil
}

func encode(bans []Ban) ([]byte, error) {
	data, err := json.MarshalIndent(fileBody{Version: fileVersion, Bans: bans}, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("bans: encode: %w", err)
	}
	return append(data, '\n'), nil
}

// readFile loads path; a missing file is an empty list.
func readFile(path string, maxBans int, now time.Time) ([]Ban, error) {
	f, err := os.Open(path) //nolint:gosec // the operator's own setting
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("bans: %w", err)
	}
	defer func() { _ = f.Close() }()
	bans, err := decode(f, maxBans, now)
	if err != nil {
		return nil, fmt.Errorf("%w (%s: fix or remove it)", err, path)
	}
	return bans, nil
}

// writeFile replaces path with bans atomically: a crash leaves the old file
// or the new one, never half of one.
func writeFile(path string, bans []Ban) error {
	data, err := encode(bans)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("bans: write: %w", err)
	}
	defer func() { _ = os.Remove(tmp.Name()) }() // gone after the rename
	if _, err := tmp.Write(data); err != nil {
		_ = tmp.Close()
		return fmt.Errorf("bans: write: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		_ = tmp.Close()
		return fmt.Errorf("bans: write: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("bans: write: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("bans: write: %w", err)
	}
	return nil
}
