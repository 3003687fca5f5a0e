package bans

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"time"
)

// A cluster's nodes share one ban list: each node's Store writes its
// changes to a Shared (the cluster's NATS KV bucket, package cluster) and
// applies what the others write (Apply, Remove). The file, if any, follows
// along on each node.

// Shared carries a node's ban changes to the other nodes.
type Shared interface {
	// PutBan stores b for every node; DeleteBan removes the ban id names.
	PutBan(ctx context.Context, b Ban) error
	DeleteBan(ctx context.Context, id string) error
}

// sharedTimeout bounds one write to the shared list: an admin request
// waits for it.
const sharedTimeout = 5 * time.Second

// MaxBanBytes bounds one ban as JSON, as the shared list carries it.
const MaxBanBytes = 2048

// Share makes s write its changes to shared from now on and returns the
// bans it holds, for the caller to publish (a node that kept bans in its
// file before joining the cluster). onChange is called after a ban from
// another node is applied (the server ends the sessions it covers).
func (s *Store) Share(shared Shared, onChange func()) []Ban {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.shared, s.onChange = shared, onChange
	return s.allLocked()
}

// publish writes a change to the shared list before it is made here: a
// ban another node does not get is refused, not half made.
func publish(shared Shared, put *Ban, del string) error {
	if shared == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), sharedTimeout)
	defer cancel()
	var err error
	if put != nil {
		err = shared.PutBan(ctx, *put)
	} else {
		err = shared.DeleteBan(ctx, del)
	}
	if err != nil {
		return fmt.Errorf("bans: the cluster's ban list: %w", err)
	}
	return nil
}

// Apply takes in a ban another node added (or this one: applying it again
// changes nothing), saves the file and calls onChange. An expired ban is
// dropped.
func (s *Store) Apply(b Ban) error {
	if err := b.validate(); err != nil {
		return err
	}
	if !b.Expires.After(s.cfg.Now()) {
		return nil
	}
	s.mu.Lock()
	old, had := s.getLocked(b)
	same := had && old.ID == b.ID && old.Reason == b.Reason && old.Expires.Equal(b.Expires) && old.Created.Equal(b.Created)
	if !same {
		s.putLocked(b)
		s.saveQuietLocked()
	}
	onChange := s.onChange
	s.mu.Unlock()
	if !same && onChange != nil {
		onChange()
	}
	return nil
}

// Remove takes out a ban another node lifted (or that is not here).
func (s *Store) Remove(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, b := range s.allLocked() {
		if b.ID == id {
			s.deleteLocked(b)
			s.saveQuietLocked()
			return
		}
	}
}

// saveQuietLocked saves a change that came from elsewhere: it is in force
// whether or not this node's file took it, so a failure is logged.
func (s *Store) saveQuietLocked() {
	if err := s.saveLocked(); err != nil {
		s.cfg.Logger.Error("bans: a ban from the cluster was not saved to the file", "file", s.cfg.File, "err", err)
	}
}

// EncodeBan is b as the shared list carries it.
func EncodeBan(b Ban) ([]byte, error) {
	data, err := json.Marshal(b)
	if err != nil {
		return nil, fmt.Errorf("bans: encode: %w", err)
	}
	return data, nil
}

// DecodeBan reads one ban of at most MaxBanBytes, valid.
func DecodeBan(data []byte) (Ban, error) {
	if len(data) > MaxBanBytes {
		return Ban{}, fmt.Errorf("%w: a ban of %d bytes (at most %d)", ErrCorrupt, len(data), MaxBanBytes)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var b Ban
	if err := dec.Decode(&b); err != nil {
		return Ban{}, fmt.Errorf("%w: %w", ErrCorrupt, err)
	}
	if dec.More() {
		return Ban{}, fmt.Errorf("%w: data after the ban", ErrCorrupt)
	}
	if err := b.validate(); err != nil {
		return Ban{}, fmt.Errorf("%w: %w", ErrCorrupt, err)
	}
	return b, nil
}
