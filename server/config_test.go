package server

import (
	"io"
	"strings"
	"testing"

	"github.com/hostrelay/hostrelay/turn"
)

func TestConfigTURNBandwidth(t *testing.T) {
	noEnv := func(string) string { return "" }
	cfg, err := LoadConfig(nil, noEnv, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if rate, burst := cfg.turnBandwidth(); rate != turn.DefaultMaxBandwidth || burst != turn.DefaultMaxBandwidth/4 {
		t.Fatalf("default: %d B/s burst %d, want %d and turn's default burst", rate, burst, turn.DefaultMaxBandwidth)
	}

	for _, tc := range []struct {
		args        []string
		env         map[string]string
		rate, burst int64
	}{
		{args: []string{"-turn-max-bandwidth", "0"}, rate: turn.NoBandwidthLimit},
		{args: []string{"-turn-max-bandwidth", "2MiB", "-turn-bandwidth-burst", "64KiB"}, rate: 2 << 20, burst: 64 << 10},
		{args: []string{"-turn-max-bandwidth", "500kb"}, rate: 500_000, burst: 125_000},
		{args: []string{"-turn-max-bandwidth", "65536"}, rate: 65536, burst: 16384},
		{env: map[string]string{"HOSTRELAY_TURN_MAX_BANDWIDTH": "3 MiB", "HOSTRELAY_TURN_BANDWIDTH_BURST": "1600"},
			rate: 3 << 20, burst: 1600},
		// Flags override the environment.
		{args: []string{"-turn-max-bandwidth", "1GiB"}, env: map[string]string{"HOSTRELAY_TURN_MAX_BANDWIDTH": "0"}, rate: 1 << 30, burst: 1 << 28},
	} {
		cfg, err := LoadConfig(tc.args, func(k string) string { return tc.env[k] }, io.Discard)
		if err != nil {
			t.Errorf("%v %v: %v", tc.args, tc.env, err)
			continue
		}
		if rate, burst := cfg.turnBandwidth(); rate != tc.rate || burst != tc.burst {
			t.Errorf("%v %v: %d B/s burst %d, want %d burst %d", tc.args, tc.env, rate, burst, tc.rate, tc.burst)
		}
	}

	for _, bad := range [][]string{
		{"-turn-max-bandwidth", "-1"},
		{"-turn-max-bandwidth", "1.5MiB"},
		{"-turn-max-bandwidth", "1Mbit"},
		{"-turn-max-bandwidth", "MiB"},
		{"-turn-max-bandwidth", "1000"}, // under 16 KiB/s: a unit mistake
		{"-turn-max-bandwidth", "2TiB"}, // over turn's bound
		{"-turn-max-bandwidth", "9999999999999TiB"},
		{"-turn-bandwidth-burst", "1000"}, // under one full-size packet
		{"-turn-bandwidth-burst", "2GiB"},
	} {
		_, err := LoadConfig(bad, noEnv, io.Discard)
		if err == nil {
			t.Errorf("%v accepted", bad)
		} else if !strings.Contains(err.Error(), bad[0]) {
			t.Errorf("%v: error does not name the flag: %v", bad, err)
		}
	}
	if _, err := LoadConfig(nil, func(k string) string {
		if k == "HOSTRELAY_TURN_MAX_BANDWIDTH" {
			return "fast"
		}
		return ""
	}, io.Discard); err == nil || !strings.Contains(err.Error(), "HOSTRELAY_TURN_MAX_BANDWIDTH") {
		t.Errorf("bad env not named: %v", err)
	}

	// -h shows the default in the unit it was given in.
	var usage strings.Builder
	_, _ = LoadConfig([]string{"-h"}, noEnv, &usage)
	if !strings.Contains(usage.String(), "(default 1MiB)") {
		t.Errorf("usage does not show the default bandwidth:\n%s", usage.String())
	}
}
