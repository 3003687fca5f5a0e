package protocol

import (
	"bytes"
	"fmt"

	"github.com/vmihailenco/msgpack/v5"
)

// Envelope is one decoded frame: the type tag, the request id (0 for
// events) and the still-encoded body, which DecodeBody turns into a message.
type Envelope struct {
	Type string             `msgpack:"t"`
	ID   uint32             `msgpack:"id,omitempty"`
	Body msgpack.RawMessage `msgpack:"b,omitempty"`
}

// Encode builds one frame. Integers are written in their shortest form and
// zero-valued fields are omitted, so every implementation that follows those
// two rules produces the same bytes (testdata/golden.json checks it).
func Encode(typ string, id uint32, body any) ([]byte, error) {
	var buf bytes.Buffer
	enc := msgpack.NewEncoder(&buf)
	enc.UseCompactInts(true)
	fields := 1
	if id != 0 {
		fields++
	}
	if body != nil {
		fields++
	}
	err := enc.EncodeMapLen(fields)
	if err == nil {
		err = encodeField(enc, "t", typ)
	}
	if err == nil && id != 0 {
		err = encodeField(enc, "id", id)
	}
	if err == nil && body != nil {
		err = encodeField(enc, "b", body)
	}
	if err != nil {
		return nil, fmt.Errorf("protocol: encode %s: %w", typ, err)
	}
	if buf.Len() > MaxFrame {
		return nil, fmt.Errorf("%w: %s is %d bytes", ErrTooLarge, typ, buf.Len())
	}
	return buf.Bytes(), nil
}

func encodeField(enc *msgpack.Encoder, key string, v any) error {
	if err := enc.EncodeString(key); err != nil {
		return err
	}
	return enc.Encode(v)
}

// Decode parses one frame from an untrusted peer. It refuses oversized,
// malformed or too deeply nested input before the msgpack library sees it,
// so no declared length can make it allocate more than the frame's size.
func Decode(frame []byte) (Envelope, error) {
	var env Envelope
	if len(frame) > MaxFrame {
		return env, fmt.Errorf("%w: %d bytes", ErrTooLarge, len(frame))
	}
	if err := Check(frame, MaxDepth); err != nil {
		return env, err
	}
	if err := msgpack.Unmarshal(frame, &env); err != nil {
		return env, fmt.Errorf("%w: envelope: %w", ErrMalformed, err)
	}
	if env.Type == "" {
		return env, ErrNoType
	}
	return env, nil
}

// DecodeBody decodes an envelope's body into v, a pointer to one of this
// package's message types. A missing body leaves v at its zero value. The
// body was bounded by Decode; unknown fields are skipped so that newer
// clients can add fields without breaking older servers.
func DecodeBody(env Envelope, v any) error {
	if len(env.Body) == 0 {
		return nil
	}
	if err := msgpack.Unmarshal(env.Body, v); err != nil {
		return fmt.Errorf("%w: %s body: %w", ErrMalformed, env.Type, err)
	}
	return nil
}
