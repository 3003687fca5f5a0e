package protocol

import (
	"fmt"
	"strings"
	"unicode"
)

// ValidationError names the field that failed and why. The server sends it
// back as CodeInvalidArgument with this text.
type ValidationError struct {
	Field  string
	Reason string
}

func (e *ValidationError) Error() string {
	return fmt.Sprintf("protocol: %s %s", e.Field, e.Reason)
}

func invalid(field, format string, args ...any) error {
	return &ValidationError{Field: field, Reason: fmt.Sprintf(format, args...)}
}

// ValidateBytes refuses s longer than maxBytes.
func ValidateBytes(field, s string, maxBytes int) error {
	if len(s) > maxBytes {
		return invalid(field, "is longer than %d bytes", maxBytes)
	}
	return nil
}

// Validate checks a Hello and normalises its name in place. The version is
// the handler's business (it has its own error code); an empty name is
// allowed until a room needs one.
func (m *Hello) Validate() error {
	if len(m.Resume) > MaxResumeToken {
		return invalid("resume", "is longer than %d bytes", MaxResumeToken)
	}
	if m.Name != "" {
		m.Name = NormalizeName(m.Name)
		if err := ValidatePlayerName(m.Name); err != nil {
			return err
		}
	}
	if m.Device == "" {
		return nil
	}
	if len(m.Device) < MinDevice || len(m.Device) > MaxDevice {
		return invalid("device", "must be %d to %d characters", MinDevice, MaxDevice)
	}
	for _, r := range m.Device {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return invalid("device", "may hold only letters, digits, - and _")
		}
	}
	return nil
}

// validSettings normalises and checks the settings CreateRoom and UpdateRoom
// share.
func validSettings(name *string, maxPlayers int, password string, mode *string) error {
	*name, *mode = NormalizeName(*name), NormalizeName(*mode)
	if err := ValidateText("name", *name, MaxRoomName); err != nil {
		return err
	}
	if maxPlayers < MinPlayers || maxPlayers > MaxPlayers {
		return invalid("maxPlayers", "must be between %d and %d", MinPlayers, MaxPlayers)
	}
	if len(password) > MaxPassword {
		return invalid("password", "is longer than %d bytes", MaxPassword)
	}
	if *mode != "" {
		return ValidateText("mode", *mode, MaxMode)
	}
	return nil
}

// Validate checks a CreateRoom request and normalises its name and mode.
func (m *CreateRoom) Validate() error {
	if err := validSettings(&m.Name, m.MaxPlayers, m.Password, &m.Mode); err != nil {
		return err
	}
	if m.Region != "" {
		return ValidateRegion(m.Region)
	}
	return nil
}

// ValidateRegion checks a region label: 1 to MaxRegion bytes of lower-case
// letters, digits, '-', '_' and '.', so it is safe in a NATS subject, a
// key and a page.
func ValidateRegion(r string) error {
	if r == "" || len(r) > MaxRegion {
		return invalid("region", "must be 1 to %d bytes", MaxRegion)
	}
	for i := range len(r) {
		c := r[i]
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '-' && c != '_' && c != '.' {
			return invalid("region", "may hold only a-z, 0-9, '-', '_' and '.'")
		}
	}
	return nil
}

// Validate checks an UpdateRoom request and normalises its name and mode.
// Whether the new maximum still holds the room's players is for the server
// to say.
func (m *UpdateRoom) Validate() error {
	return validSettings(&m.Name, m.MaxPlayers, m.Password, &m.Mode)
}

// Validate checks a SetName request and normalises the name in place.
func (m *SetName) Validate() error {
	m.Name = NormalizeName(m.Name)
	return ValidatePlayerName(m.Name)
}

// Validate checks a Kick request.
func (m *Kick) Validate() error {
	if m.ID == "" {
		return invalid("id", "is empty")
	}
	return nil
}

// Validate checks a Chat line and normalises it in place: not blank, at most
// MaxChatText characters and nothing checkRunes refuses (a line is one line).
func (m *Chat) Validate() error {
	m.Text = NormalizeText(m.Text)
	return ValidateText("text", m.Text, MaxChatText)
}

// Validate checks a JoinRoom request and normalises its code in place.
func (m *JoinRoom) Validate() error {
	code, ok := NormalizeRoomCode(m.Code)
	if !ok {
		return invalid("code", "is not a room code (%d characters from %s)", RoomCodeLength, RoomCodeAlphabet)
	}
	m.Code = code
	if len(m.Password) > MaxPassword {
		return invalid("password", "is longer than %d bytes", MaxPassword)
	}
	return nil
}

// Validate checks a Signal's kind and sizes.
func (m *Signal) Validate() error {
	if m.To == "" {
		return invalid("to", "is empty")
	}
	switch m.Kind {
	case SignalOffer, SignalAnswer:
		if m.SDP == "" {
			return invalid("sdp", "is empty")
		}
		if err := ValidateBytes("sdp", m.SDP, MaxSDP); err != nil {
			return err
		}
		if m.Candidate != "" || m.Mid != "" {
			return invalid("cand", "is set on an %s", m.Kind)
		}
	case SignalCandidate:
		if m.SDP != "" {
			return invalid("sdp", "is set on a candidate")
		}
		// An empty candidate is the end-of-candidates marker.
		if err := ValidateBytes("cand", m.Candidate, MaxCandidate); err != nil {
			return err
		}
		if err := ValidateBytes("mid", m.Mid, MaxMid); err != nil {
			return err
		}
	default:
		return invalid("kind", "must be offer, answer or candidate")
	}
	return nil
}

// NormalizeRoomCode upper-cases a typed code and drops spaces and dashes,
// then reports whether it is a well-formed code.
func NormalizeRoomCode(s string) (string, bool) {
	if len(s) > 4*RoomCodeLength {
		return "", false
	}
	var b strings.Builder
	for _, r := range strings.ToUpper(s) {
		if r == ' ' || r == '-' {
			continue
		}
		if r > unicode.MaxASCII || !strings.ContainsRune(RoomCodeAlphabet, r) {
			return "", false
		}
		b.WriteRune(r)
	}
	if b.Len() != RoomCodeLength {
		return "", false
	}
	return b.String(), true
}
