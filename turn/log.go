package turn

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/pion/logging"
)

// slogTrace is below slog.LevelDebug for pion's per-packet trace lines.
const slogTrace = slog.LevelDebug - 4

// pionLoggerFactory sends pion's logs to slog.
type pionLoggerFactory struct{ log *slog.Logger }

// NewLogger returns a pion logger for one pion subsystem.
func (f pionLoggerFactory) NewLogger(scope string) logging.LeveledLogger {
	return pionLogger{log: f.log.With("pion", scope)}
}

// pionLogger maps pion levels onto slog. pion's Debug and Info are demoted
// below slog's Debug: pion logs several Debug lines for every relayed packet
// and an Info line for every refused permission or unpermitted packet, which
// a client can trigger at line rate, and -log-level debug must stay readable.
type pionLogger struct{ log *slog.Logger }

func (l pionLogger) logf(level slog.Level, format string, args ...any) {
	// Check first: pion formats per packet at debug level.
	if l.log.Enabled(context.Background(), level) {
		l.log.Log(context.Background(), level, fmt.Sprintf(format, args...))
	}
}

func (l pionLogger) Trace(msg string)                  { l.logf(slogTrace, "%s", msg) }
func (l pionLogger) Tracef(format string, args ...any) { l.logf(slogTrace, format, args...) }
func (l pionLogger) Debug(msg string)                  { l.logf(slogTrace, "%s", msg) }
func (l pionLogger) Debugf(format string, args ...any) { l.logf(slogTrace, format, args...) }
func (l pionLogger) Info(msg string)                   { l.logf(slogTrace, "%s", msg) }
func (l pionLogger) Infof(format string, args ...any)  { l.logf(slogTrace, format, args...) }
func (l pionLogger) Warn(msg string)                   { l.logf(slog.LevelWarn, "%s", msg) }
func (l pionLogger) Warnf(format string, args ...any)  { l.logf(slog.LevelWarn, format, args...) }
func (l pionLogger) Error(msg string)                  { l.logf(slog.LevelError, "%s", msg) }
func (l pionLogger) Errorf(format string, args ...any) { l.logf(slog.LevelError, format, args...) }
