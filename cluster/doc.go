// Package cluster joins hostrelay nodes into one service on NATS: node
// presence with a heartbeat, the room directory (code → node, the public
// listing) in JetStream key-value buckets, and requests between nodes on
// subjects. A room lives and dies with its node — its TURN allocations cannot
// move — so the cluster never moves a room: it tells a player which node owns
// a code (the lobby answers room_elsewhere with that node's URL), lists every
// node's public rooms on every node, and notices within DeadAfter that a node
// stopped, taking its rooms off every list and answering room_lost for them.
//
// The package knows nothing of lobby sessions: it talks to this node's lobby
// through the Lobby interface (signaling.Hub), and the lobby talks to it
// through signaling.Cluster, which *Cluster satisfies directly, answering in
// signaling's Location. Both are asserted at compile time (cluster.go).
// Without -nats there is no Cluster at all and a node is the single server
// it always was.
//
// NATS layout, for a cluster named N (default "hostrelay"):
//
//	KV bucket N_nodes   key node id → Node (JSON), rewritten every Heartbeat
//	KV bucket N_rooms   key room code → entry (JSON): owner node, public listing
//	subject N.node.<id>.room      request: is room <code> live here? "1"/"0"
//	subject N.limits.joinfail     event: an address spent a failed join
//
// docs/cluster.md is the prose version.
package cluster
