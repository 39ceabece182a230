package cmd

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/bucketctl/bucketctl/bucket"
	"github.com/bucketctl/bucketctl/bucket/rediserr"
	"github.com/bucketctl/bucketctl/tui/format"
)

// WriteError is a write (reset, consume, load) the server answered with error replies, as one
// line: what, where, how far it got, and each distinct reply counted.
type WriteError struct {
	What    string // `reset "rate:user:1"`, `reset --match "rate:*"`
	Server  string
	Outcome string // what was done before the error: "stopped after 3 bucket(s) were reset"
	causes  []writeCause
	more    int // errors beyond the first maxCauses texts
}

// writeCause is one distinct reply, with the number of keys that got it and the first.
type writeCause struct {
	text  string
	err   error
	keys  int
	first string
}

const maxCauses = 3

func (e *WriteError) Error() string {
	var parts []string
	for _, c := range e.causes {
		s := safe(c.text)
		switch {
		case c.keys > 1 && c.first != "":
			s += fmt.Sprintf(" (%s keys, the first %s)", fmtCount(c.keys), format.QuoteKey(c.first))
		case c.keys > 1:
			s += fmt.Sprintf(" (%s times)", fmtCount(c.keys))
		}
		if h := refusalHint(c.err); h != "" {
			s += ": " + h
		}
		parts = append(parts, s)
	}
	if e.more > 0 {
		parts = append(parts, fmt.Sprintf("and %s other error(s)", fmtCount(e.more)))
	}
	outcome := ""
	if e.Outcome != "" {
		outcome = " " + e.Outcome
	}
	return fmt.Sprintf("%s on %s%s: %s", e.What, e.Server, outcome, strings.Join(parts, "; "))
}

func (e *WriteError) Unwrap() error {
	if len(e.causes) == 0 {
		return nil
	}
	return e.causes[0].err
}

// add counts err, each error of a join separately.
func (e *WriteError) add(err error) {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		for _, err := range j.Unwrap() {
			e.add(err)
		}
		return
	}
	key := ""
	var ke *bucket.KeyError
	if errors.As(err, &ke) {
		key = ke.Key
	}
	text := rediserr.ReplyText(err)
	for i := range e.causes {
		if e.causes[i].text == text {
			e.causes[i].keys++
			return
		}
	}
	if len(e.causes) == maxCauses {
		e.more++
		return
	}
	e.causes = append(e.causes, writeCause{text: text, err: err, keys: 1, first: key})
}

// refusalHint says how to get a server that refuses every write to take them.
func refusalHint(err error) string {
	switch rediserr.Refusal(err) {
	case "NOREPLICAS":
		return "the server refuses writes until a replica is connected (min-replicas-to-write); reconnect one, then run again"
	case "READONLY":
		return "this is a replica: point --url (or the context) at the master"
	case "OOM":
		return "the server is at its maxmemory and its policy refuses writes; free memory or raise maxmemory, then run again"
	case "MISCONF":
		return "the server refuses writes since its last RDB save failed (stop-writes-on-bgsave-error); fix its disk or save, then run again"
	}
	return "" // NOPERM: the PermissionError says which command to grant
}

// hasReply says err, or an error it joins, is an error reply of the server's (not a
// failure to reach it, a timeout, or an error of bucketctl's own).
func hasReply(err error) bool {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return slices.ContainsFunc(j.Unwrap(), hasReply)
	}
	if err == nil || rediserr.IsUnreachable(err) {
		return false
	}
	var re interface{ RedisError() }
	var pe *PermissionError
	return errors.As(err, &re) || errors.As(err, &pe)
}

// writeFailure makes a WriteError of an error reply; any other error is returned as it is.
func writeFailure(f *Factory, what, outcome string, err error) error {
	if !hasReply(err) {
		return err
	}
	return newWriteError(what, serverOf(f)+refusingMaster(f, err), outcome, err)
}

func newWriteError(what, server, outcome string, err error) *WriteError {
	e := &WriteError{What: what, Server: server, Outcome: outcome}
	e.add(err)
	return e
}

// refusingMaster names, on a Cluster, the master that refused one key's write (" (master
// 10.0.0.2:6379)"); "" elsewhere, and when the error names no key or several.
func refusingMaster(f *Factory, err error) string {
	var ke *bucket.KeyError
	if o, cerr := f.Conn(); cerr != nil || len(o.Cluster) == 0 || !errors.As(err, &ke) {
		return ""
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok && len(j.Unwrap()) > 1 {
		return ""
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if node, err := f.nodeOf(ctx); err == nil {
		if m := node(ke.Key); m != "?" {
			return " (master " + m + ")"
		}
	}
	return ""
}
