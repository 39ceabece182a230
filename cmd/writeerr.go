package cmd

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/bucketctl/bucketctl/bucket"
	"github.com/bucketctl/bucketctl/bucket/rediserr"
	"github.com/bucketctl/bucketctl/tui/format"
)

// WriteError is a write (reset, consume) that the server answered with an error reply, as
// one line: what was written (the key, or for --match how far it got), the server, the
// reply without the script's SHA1 and line, and for a server that refuses every write
// (NOREPLICAS, READONLY, OOM, MISCONF) the fix. Identical replies for many keys are
// counted, not repeated. Exit 1: the server answered.
type WriteError struct {
	// What is the write: `reset "rate:user:1"`, `reset --match "rate:*"`.
	What   string
	Server string
	// Outcome, when set, says what was done before the error: "stopped after 3 bucket(s)
	// were reset".
	Outcome string
	causes  writeCauses
}

func (e *WriteError) Error() string {
	outcome := ""
	if e.Outcome != "" {
		outcome = " " + e.Outcome
	}
	return fmt.Sprintf("%s on %s%s: %s", e.What, e.Server, outcome, e.causes.String())
}

// Unwrap returns the first error, so errors.Is and As see what the server answered.
func (e *WriteError) Unwrap() error {
	if len(e.causes.list) == 0 {
		return nil
	}
	return e.causes.list[0].err
}

// writeCause is one distinct error text, with the number of keys that got it.
type writeCause struct {
	text  string
	err   error
	keys  int
	first string // the first key that got it, "" when the error is not a key's
}

// writeCauses groups errors by their text.
type writeCauses struct {
	list []writeCause
	// more counts the errors of texts beyond the first few.
	more int
}

// maxCauses is how many distinct errors one line names.
const maxCauses = 3

// add adds err, each error of a join separately (ResetMany's, one per key).
func (w *writeCauses) add(err error) {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range j.Unwrap() {
			w.add(e)
		}
		return
	}
	key := ""
	var ke *bucket.KeyError
	if errors.As(err, &ke) {
		key = ke.Key
	}
	text := rediserr.ReplyText(err)
	for i := range w.list {
		if w.list[i].text == text {
			w.list[i].keys++
			return
		}
	}
	if len(w.list) == maxCauses {
		w.more++
		return
	}
	w.list = append(w.list, writeCause{text: text, err: err, keys: 1, first: key})
}

func (w *writeCauses) String() string {
	parts := make([]string, 0, len(w.list)+1)
	for _, c := range w.list {
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
	if w.more > 0 {
		parts = append(parts, fmt.Sprintf("and %s other error(s)", fmtCount(w.more)))
	}
	return strings.Join(parts, "; ")
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

// isReply says err holds an error reply of the server's (not a failure to reach it, a
// timeout, or an error of bucketctl's own that names the key already).
func isReply(err error) bool {
	if err == nil || rediserr.IsUnreachable(err) {
		return false
	}
	var re interface{ RedisError() } // a server's error reply
	var pe *PermissionError
	return errors.As(err, &re) || errors.As(err, &pe)
}

// hasReply says err, or one of the errors it joins, is an error reply.
func hasReply(err error) bool {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range j.Unwrap() {
			if hasReply(e) {
				return true
			}
		}
		return false
	}
	return isReply(err)
}

// writeFailure names what was written and the server in the error of a write when the
// server answered with an error reply; any other error is returned as it is.
func writeFailure(f *Factory, what, outcome string, err error) error {
	if !hasReply(err) {
		return err
	}
	return newWriteError(what, serverOf(f)+refusingMaster(f, err), outcome, err)
}

// newWriteError is the WriteError of err, a server's error reply (or a join of them).
func newWriteError(what, server, outcome string, err error) *WriteError {
	e := &WriteError{What: what, Server: server, Outcome: outcome}
	e.causes.add(err)
	return e
}

// refusingMaster names, on a Cluster, the master that refused one key's write (" (master
// 10.0.0.2:6379)"): the seeds alone do not say which node to look at. "" elsewhere, and
// when the error names no key or several.
func refusingMaster(f *Factory, err error) string {
	var ke *bucket.KeyError
	if o, cerr := f.Conn(); cerr != nil || len(o.Cluster) == 0 || !errors.As(err, &ke) {
		return ""
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok && len(j.Unwrap()) > 1 {
		return "" // several keys, maybe on several masters: each cause names its key
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	node, nerr := f.nodeOf(ctx)
	if nerr != nil {
		return ""
	}
	if m := node(ke.Key); m != "?" {
		return " (master " + m + ")"
	}
	return ""
}
