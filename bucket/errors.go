package bucket

import (
	"errors"
	"fmt"
	"strings"

	"github.com/bucketctl/bucketctl/bucket/rediserr"
)

// The errors of the package, matched with errors.Is.
var (
	ErrInvalid     = errors.New("invalid argument") // arguments that can never be valid
	ErrNoSpec      = errors.New("no capacity/rate known for this bucket")
	ErrNoKey       = errors.New("no such key") // wrapped beside ErrNoSpec
	ErrWrongType   = errors.New("not a bucket")
	ErrForeign     = errors.New("not a native bucket") // the native script met another layout
	ErrUndeclared  = errors.New("another application's bucket is written only where its layout is declared")
	ErrCorrupt     = errors.New("corrupt bucket")
	ErrChanged     = errors.New("changed since it was read: no longer a bucket of that layout; left untouched")
	ErrSpecDiffers = errors.New("the given spec differs from the bucket's stored spec")
	ErrCrossSlot   = errors.New("keys hash to different slots")
	ErrNotSent     = errors.New("decision not sent") // nothing was applied
)

// UncertainError is a write sent without a reply; Resets counts reset buckets (0: a decision).
type UncertainError struct {
	Key    string
	Err    error
	Resets int
}

func (e *UncertainError) Error() string {
	switch {
	case e.Resets == 1:
		return fmt.Sprintf("no reply for the reset of %q (%v): it may or may not have been applied; a reset is safe to run again", e.Key, e.Err)
	case e.Resets > 1:
		return fmt.Sprintf("no reply for the reset of %d buckets, the first %q (%v): they may or may not have been applied; a reset is safe to run again", e.Resets, e.Key, e.Err)
	}
	return fmt.Sprintf("no reply for %q (%v): the decision may or may not have been applied, and it is not re-sent", e.Key, e.Err)
}

func (e *UncertainError) Unwrap() error { return e.Err }

// decisionErr makes a network error after the command was sent an UncertainError.
func (s *Store) decisionErr(key string, err error, replyErr func(error) error) error {
	if errors.Is(err, ErrNotSent) || errors.As(err, new(*UncertainError)) {
		return err
	}
	s.networkErr(err)
	if !rediserr.IsNetwork(err) || rediserr.NotSent(err) {
		return replyErr(err)
	}
	return &UncertainError{Key: key, Err: err}
}

func (s *Store) networkErr(err error) { rediserr.ReloadSlots(s.rdb, err) }

// NotBucketError is ErrWrongType for s with its Problem (and ErrUndeclared for a bare number).
func (s State) NotBucketError() error {
	err := notBucketError(s.Key, s.Problem)
	if s.Bare {
		return bareError{err}
	}
	return err
}

type bareError struct{ error }

func (e bareError) Unwrap() []error { return []error{e.error, ErrUndeclared} }

func notBucketError(key, why string) error {
	why = strings.TrimPrefix(strings.TrimPrefix(why, ErrWrongType.Error()), ": ")
	if why == "" {
		return fmt.Errorf("%q: %w (left untouched)", key, ErrWrongType)
	}
	return fmt.Errorf("%q: %w: %s (left untouched)", key, ErrWrongType, why)
}

// SpecDiffersError is ErrSpecDiffers for key, with the stored spec.
type SpecDiffersError struct {
	Key    string
	Stored Spec
}

func (e *SpecDiffersError) Error() string {
	return fmt.Sprintf("%q stores capacity %s and rate %s: %v", e.Key, fmtFloat(e.Stored.Capacity), fmtFloat(e.Stored.Rate), ErrSpecDiffers)
}

func (e *SpecDiffersError) Unwrap() error { return ErrSpecDiffers }

func scriptErr(key string, err error) error {
	msg := err.Error()
	switch {
	case strings.Contains(msg, "WRONGTYPE"):
		return notBucketError(key, "it holds another Redis type")
	case strings.Contains(msg, "bucketctl: not a native bucket"):
		return fmt.Errorf("%w: %q is another application's bucket, not a native one", ErrForeign, key)
	case strings.Contains(msg, "bucketctl: corrupt bucket: "):
		_, why, _ := strings.Cut(msg, "corrupt bucket: ")
		return fmt.Errorf("%q: %w: %s", key, ErrCorrupt, strings.TrimSuffix(rediserr.ReplyText(errors.New(why)), ": left untouched")+" (left untouched)")
	case strings.Contains(msg, "bucketctl: stored spec differs: "):
		_, rest, _ := strings.Cut(msg, "stored spec differs: ")
		e := &SpecDiffersError{Key: key}
		if f := strings.Fields(rediserr.ReplyText(errors.New(rest))); len(f) >= 4 {
			e.Stored.Capacity, _ = ParseNumber(f[1])
			e.Stored.Rate, _ = ParseNumber(strings.TrimSuffix(f[3], "."))
		}
		return e
	case strings.Contains(msg, "bucketctl: no capacity/rate given and no such key"):
		return fmt.Errorf("%w: %q does not exist (%w)", ErrNoSpec, key, ErrNoKey)
	case strings.Contains(msg, "bucketctl: no capacity/rate"):
		return fmt.Errorf("%w: %q", ErrNoSpec, key)
	case strings.Contains(msg, "ERR bucketctl:"):
		return fmt.Errorf("%w: %s", ErrInvalid, strings.TrimPrefix(msg[strings.Index(msg, "bucketctl:"):], "bucketctl: "))
	}
	return err
}

func isUnknownCommand(err error) bool {
	return err != nil && strings.Contains(strings.ToLower(err.Error()), "unknown command")
}
