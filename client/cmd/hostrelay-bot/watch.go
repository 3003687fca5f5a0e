package main

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/hostrelay/hostrelay/client"
)

// watch spectates a room and prints its stream: a line per frame, with the
// tick, entity count and ball of an arena keyframe. It returns nil once
// -expect frames have arrived, or when the stream ends if none were asked.
func watch(ctx context.Context, c config, lobby *client.Lobby, out *json.Encoder) error {
	s, err := lobby.Spectate(ctx, c.watch, c.password)
	if err != nil {
		return err
	}
	room := s.Room()
	_ = out.Encode(map[string]any{"event": "spectating", "code": room.Code, "name": room.Name, "mode": room.Mode,
		"host": room.Host, "players": room.Players, "delay_ms": s.Delay().Milliseconds(), "node": lobby.URL()})
	start := time.Now()
	frames := 0
	summary := func() {
		_ = out.Encode(map[string]any{"event": "summary", "frames": frames, "dropped": s.Dropped(),
			"seconds": time.Since(start).Seconds()})
	}
	for {
		select {
		case <-ctx.Done():
			summary()
			if c.expect > 0 {
				return fmt.Errorf("%d of %d spectator frames arrived before the deadline", frames, c.expect)
			}
			return nil
		case f, ok := <-s.Frames():
			if !ok {
				_ = out.Encode(map[string]any{"event": "spectate_ended", "reason": s.Reason()})
				summary()
				if c.expect > 0 {
					return fmt.Errorf("watching ended (%s) after %d of %d frames", s.Reason(), frames, c.expect)
				}
				return nil
			}
			frames++
			ev := map[string]any{"event": "spectator_frame", "key": f.Key, "bytes": len(f.Data)}
			if room.Mode == arenaMode {
				if k, err := decodeArenaKeyframe(f.Data); err == nil {
					ev["tick"], ev["entities"], ev["names"] = k.Tick, k.Entities, k.Names
					if k.Ball != nil {
						ev["ball"] = map[string]float32{"x": k.Ball[0], "y": k.Ball[1]}
					}
				} else {
					ev["error"] = err.Error()
				}
			}
			_ = out.Encode(ev)
			if c.expect > 0 && frames >= c.expect {
				summary()
				return s.Close(ctx)
			}
		}
	}
}
