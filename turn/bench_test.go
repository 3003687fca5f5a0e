package turn

import (
	"encoding/binary"
	"testing"
)

// The relay hot paths, per packet of a typical game snapshot (150 bytes).
// Run with go test -run '^$' -bench . ./turn/.

const benchPayload = 150

// benchRate keeps each allocation's bandwidth bucket in the path (admit
// runs for every packet, as with the default limit) at a rate no loop
// reaches: with the default 1 MiB/s a benchmark's millions of packets are
// dropped after the first quarter second.
func benchRate(c *Config) {
	c.MaxBandwidth = maxBandwidth
	c.BandwidthBurst = maxBandwidthBurst
}

// BenchmarkForward is the ChannelData fast path: one client's packet
// rewritten for the peer's channel, ready for one sendto.
func BenchmarkForward(b *testing.B) {
	allocs, _, a, _ := unitAllocations(b, benchRate)
	pkt := channelData(0x4000, string(make([]byte, benchPayload)))
	b.SetBytes(benchPayload)
	b.ReportAllocs()
	for b.Loop() {
		binary.BigEndian.PutUint16(pkt[0:2], 0x4000)
		if _, n, ok := allocs.forward(pkt, a.client); !ok || n == 0 {
			b.Fatal("not forwarded")
		}
	}
}

// BenchmarkForwardManyChannels is BenchmarkForward with both allocations at
// DefaultMaxChannelsPerAllocation bindings: the lookups cost what they cost
// with one (they scanned a slice, 5.6 -> 10 us per packet with many).
func BenchmarkForwardManyChannels(b *testing.B) {
	allocs, _, a, peer := unitAllocations(b, benchRate)
	for i := range uint16(DefaultMaxChannelsPerAllocation - 1) {
		a.channels.bind(0x5000+i, 3000+i)
		peer.channels.bind(0x5000+i, 3000+i)
	}
	pkt := channelData(0x4000, string(make([]byte, benchPayload)))
	b.SetBytes(benchPayload)
	b.ReportAllocs()
	for b.Loop() {
		binary.BigEndian.PutUint16(pkt[0:2], 0x4000)
		if _, n, ok := allocs.forward(pkt, a.client); !ok || n == 0 {
			b.Fatal("not forwarded")
		}
	}
}

// BenchmarkForwardInbox is the fast path to a peer with no channel back: the
// packet is handed to the peer's inbox and read by pion's loop for it.
func BenchmarkForwardInbox(b *testing.B) {
	allocs, _, a, peer := unitAllocations(b, benchRate)
	peer.channels.reset()
	pkt := channelData(0x4000, string(make([]byte, benchPayload)))
	buf := make([]byte, packetCap)
	b.SetBytes(benchPayload)
	b.ReportAllocs()
	for b.Loop() {
		if _, n, ok := allocs.forward(pkt, a.client); !ok || n != 0 {
			b.Fatal("not handed over")
		}
		if _, _, err := peer.ReadFrom(buf); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRelayWriteTo is pion's path: the sender's relay socket WriteTo
// (policy check, hand over in memory) and the receiver's ReadFrom.
func BenchmarkRelayWriteTo(b *testing.B) {
	_, _, a, peer := unitAllocations(b, benchRate)
	p := make([]byte, benchPayload)
	buf := make([]byte, packetCap)
	b.SetBytes(benchPayload)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := a.WriteTo(p, peer.public); err != nil {
			b.Fatal(err)
		}
		if _, _, err := peer.ReadFrom(buf); err != nil {
			b.Fatal(err)
		}
	}
}
