package metrics

import "errors"

// ErrNoSource is returned by Register and NewRegistry when Sources lacks the
// lobby or TURN.
var ErrNoSource = errors.New("metrics: Sources.Lobby and Sources.TURN are required")
