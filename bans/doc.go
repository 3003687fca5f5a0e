// Package bans is the server's list of banned user ids and IP prefixes,
// each until a time: checked by the lobby at hello, edited by the operator
// on the admin page, and kept across restarts in a small JSON file written
// atomically (temp file, fsync, rename). Expired bans are lifted by
// themselves: no lookup sees them, and the next write drops them.
package bans
