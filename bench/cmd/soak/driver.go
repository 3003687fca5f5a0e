package main

import (
	"context"
	"math/rand/v2"
	"slices"
	"time"
)

// roomDriver keeps one room populated and churns it: one action at a time,
// at exponentially distributed intervals (a Poisson process per room, so
// churn across rooms is steady and never in lockstep).
type roomDriver struct {
	s       *soak
	migrate bool // even rooms migrate their host; odd ones close when it leaves
	size    int
	host    *player
	members []*player // everyone else
	code    string
	rng     *rand.Rand
}

func (d *roomDriver) run(ctx context.Context) {
	defer d.closeAll()
	d.fill(ctx)
	for {
		// At least a second apart, so an action's effects (channels opening
		// after a migration) are not piled on by the next in the same room.
		wait := max(time.Second, time.Duration(d.rng.ExpFloat64()*float64(d.s.cfg.churnEvery)))
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		d.reconcile(ctx)
		if len(d.members) == 0 || d.host == nil {
			continue
		}
		switch x := d.rng.Float64(); {
		case x < 0.30:
			d.clientLeaves(ctx)
		case x < 0.45:
			d.clientRejoins(ctx)
		case x < 0.75:
			d.resume()
		case d.migrate:
			d.hostLeaves(ctx)
		default:
			d.cycle(ctx)
		}
		d.fill(ctx)
	}
}

// fill creates the room if needed and joins new players up to its size.
func (d *roomDriver) fill(ctx context.Context) {
	if d.host == nil {
		p, err := d.s.newPlayer(ctx)
		if err != nil {
			return
		}
		code, err := p.create(ctx, d.migrate)
		if err != nil {
			p.close()
			return
		}
		d.host, d.code = p, code
	}
	for len(d.members) < d.size-1 && ctx.Err() == nil {
		p, err := d.s.newPlayer(ctx)
		if err != nil {
			return
		}
		if err := p.join(ctx, d.code); err != nil {
			p.close()
			return
		}
		d.members = append(d.members, p)
	}
}

// reconcile drops players whose room ended without the driver asking (the
// failure is already counted) and follows a host change it did not cause.
func (d *roomDriver) reconcile(ctx context.Context) {
	d.members = slices.DeleteFunc(d.members, func(p *player) bool {
		if r, _ := p.current(); r != nil && r.Code() == d.code {
			return false
		}
		p.close()
		return true
	})
	if d.host != nil && d.host.isHost() {
		return
	}
	if d.host != nil {
		d.host.close()
		d.host = nil
	}
	for i, p := range d.members {
		if p.isHost() {
			d.host = p
			d.members = slices.Delete(d.members, i, i+1)
			return
		}
	}
	// Nobody hosts: start over with a new room.
	d.closeAll()
	d.fill(ctx)
}

func (d *roomDriver) pick() (int, *player) {
	i := d.rng.IntN(len(d.members))
	return i, d.members[i]
}

// clientLeaves: a client leaves for good; a new player takes the seat.
func (d *roomDriver) clientLeaves(ctx context.Context) {
	i, p := d.pick()
	if p.resuming() {
		return
	}
	p.leave(ctx)
	p.close()
	d.members = slices.Delete(d.members, i, i+1)
	d.s.c.leaves.Add(1)
}

// clientRejoins: a client leaves and the same session joins again.
func (d *roomDriver) clientRejoins(ctx context.Context) {
	i, p := d.pick()
	if p.resuming() {
		return
	}
	p.leave(ctx)
	d.s.c.rejoins.Add(1)
	if err := p.join(ctx, d.code); err != nil {
		p.close()
		d.members = slices.Delete(d.members, i, i+1)
	}
}

// resume cuts a player's lobby connection (the host's too); its seat is
// held and the SDK takes it back.
func (d *roomDriver) resume() {
	p := d.host
	if i := d.rng.IntN(d.size); i < len(d.members) {
		p = d.members[i]
	}
	if !p.resuming() {
		p.cut()
	}
}

// hostLeaves: the host of a migrating room quits; the server promotes the
// longest-present member and every client connects to it.
func (d *roomDriver) hostLeaves(ctx context.Context) {
	if d.host.resuming() || slices.ContainsFunc(d.members, (*player).resuming) {
		return // the successor rule skips away players: keep it simple
	}
	d.s.c.migrations.Add(1)
	d.host.close()
	d.host = nil
	// HostChanged reaches the members over their lobby connections.
	deadline := time.Now().Add(d.s.cfg.openBound)
	poll := time.NewTicker(20 * time.Millisecond)
	defer poll.Stop()
	for time.Now().Before(deadline) {
		for i, p := range d.members {
			if p.isHost() {
				d.host = p
				d.members = slices.Delete(d.members, i, i+1)
				return
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-poll.C:
		}
	}
	d.s.c.migrateFailed.Add(1)
	d.s.c.note("room %s: no member became host within %v", d.code, d.s.cfg.openBound)
}

// cycle: the host of a closing room leaves, which ends the room for all;
// the same sessions then make a new room and join it.
func (d *roomDriver) cycle(ctx context.Context) {
	if d.host.resuming() || slices.ContainsFunc(d.members, (*player).resuming) {
		return
	}
	for _, p := range d.members {
		p.willEnd()
	}
	d.host.leave(ctx)
	for _, p := range d.members {
		if _, done := p.current(); done != nil {
			select {
			case <-done:
			case <-time.After(d.s.cfg.openBound):
				d.s.c.note("%s: room did not close within %v of its host leaving", p.name, d.s.cfg.openBound)
			case <-ctx.Done():
				return
			}
		}
	}
	d.s.c.cycles.Add(1)
	code, err := d.host.create(ctx, d.migrate)
	if err != nil {
		d.closeAll()
		return
	}
	d.code = code
	keep := d.members[:0]
	for _, p := range d.members {
		if err := p.join(ctx, code); err != nil {
			p.close()
			continue
		}
		keep = append(keep, p)
	}
	d.members = keep
}

func (d *roomDriver) closeAll() {
	for _, p := range d.members {
		p.close()
	}
	d.members = nil
	if d.host != nil {
		d.host.close()
		d.host = nil
	}
}
