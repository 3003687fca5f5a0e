module github.com/hostrelay/hostrelay

go 1.26.8

require (
	// Identity tokens (auth/): JWT parsing and checks; the JWKS client
	// (fetch, cache, refresh on an unknown kid) and its key-set parser.
	github.com/MicahParks/jwkset v0.11.4
	github.com/MicahParks/keyfunc/v3 v3.9.1
	github.com/coder/websocket v1.8.15
	github.com/golang-jwt/jwt/v5 v5.3.1
	github.com/labstack/echo/v4 v4.16.0
	// Only protocol/internal/skeletongen (and its test) reads this: the UTS #39
	// confusables data for the name skeleton table.
	github.com/mtibben/confusables v0.0.0-20210201002637-9d1b0723b659
	// The cluster (cluster/): NATS for the room directory and node
	// requests; the embedded server runs the tests' and `make run-cluster`'s NATS.
	github.com/nats-io/nats-server/v2 v2.15.2
	github.com/nats-io/nats.go v1.55.0
	github.com/pion/ice/v4 v4.4.2
	github.com/pion/logging v0.2.4
	github.com/pion/stun/v3 v3.1.7
	github.com/pion/transport/v4 v4.1.0
	github.com/pion/turn/v4 v4.1.4
	github.com/pion/webrtc/v4 v4.2.20
	// Metrics (metrics/): the collector, registry and handler; common's
	// expfmt and client_model only in tests, to parse what /metrics serves.
	github.com/prometheus/client_golang v1.23.2
	github.com/prometheus/client_model v0.6.2
	github.com/prometheus/common v0.66.1
	github.com/vmihailenco/msgpack/v5 v5.4.1
	// The -config file (server/load.go): read as nodes, so unknown keys are
	// named with their line.
	go.yaml.in/yaml/v3 v3.0.5
	// acme/autocert: certificates from Let's Encrypt for -acme-domain.
	golang.org/x/crypto v0.58.0
	golang.org/x/net v0.60.0
	golang.org/x/sys v0.49.0
	golang.org/x/text v0.43.0
	golang.org/x/time v0.16.0
)

require (
	github.com/beorn7/perks v1.0.1 // indirect
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/google/uuid v1.6.0 // indirect
	github.com/kylelemons/godebug v1.1.0 // indirect
	github.com/labstack/gommon v0.5.0 // indirect
	github.com/mattn/go-colorable v0.1.15 // indirect
	github.com/mattn/go-isatty v0.0.22 // indirect
	github.com/munnerz/goautoneg v0.0.0-20191010083416-a7dc8b61c822 // indirect
	github.com/pion/datachannel v1.6.4 // indirect; v1.6.2 (pion/webrtc v4.2.20) never applies a negotiated channel's reliability: the game channel was reliable and ordered (client/vnet_test.go)
	github.com/pion/dtls/v3 v3.1.8 // indirect
	github.com/pion/interceptor v0.1.48 // indirect
	github.com/pion/mdns/v2 v2.2.0 // indirect
	github.com/pion/randutil v0.1.0 // indirect
	github.com/pion/rtcp v1.2.17 // indirect
	github.com/pion/rtp v1.10.5 // indirect
	github.com/pion/sctp v1.12.1 // indirect
	github.com/pion/sdp/v3 v3.0.19 // indirect
	github.com/pion/srtp/v3 v3.0.13 // indirect
	github.com/pion/stun/v4 v4.0.0 // indirect
	github.com/pion/transport/v5 v5.1.4 // indirect
	github.com/pion/turn/v5 v5.1.0 // indirect
	github.com/prometheus/procfs v0.16.1 // indirect
	github.com/valyala/bytebufferpool v1.0.0 // indirect
	github.com/valyala/fasttemplate v1.2.2 // indirect
	github.com/vmihailenco/tagparser/v2 v2.0.0 // indirect
	github.com/wlynxg/anet v0.0.5 // indirect
	go.yaml.in/yaml/v2 v2.4.2 // indirect
	google.golang.org/protobuf v1.36.8 // indirect
)

require (
	github.com/antithesishq/antithesis-sdk-go v0.8.0-default-no-op // indirect
	github.com/google/go-tpm v0.9.8 // indirect
	github.com/klauspost/compress v1.20.3 // indirect
	github.com/minio/highwayhash v1.0.4 // indirect
	github.com/nats-io/jwt/v2 v2.8.2 // indirect
	github.com/nats-io/nkeys v0.4.16 // indirect
	github.com/nats-io/nuid v1.0.1 // indirect
)
