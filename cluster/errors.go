package cluster

import "errors"

var (
	// ErrNodeIDInUse reports a node id that a live node already announces.
	ErrNodeIDInUse = errors.New("cluster: node id in use by a live node")
	// ErrDisconnected reports a lookup while NATS is unreachable.
	ErrDisconnected = errors.New("cluster: not connected to NATS")
	// ErrClosed reports a call after Close.
	ErrClosed = errors.New("cluster: closed")
)
