package iostreams

import (
	"bytes"
	"io"
	"os"

	"golang.org/x/term"
)

// IOStreams is where a command reads and writes: data to Out, diagnostics to ErrOut. A TTY
// changes presentation, never content.
type IOStreams struct {
	In                             io.Reader
	Out, ErrOut                    io.Writer
	StdinTTY, StdoutTTY, StderrTTY bool
	NoColor                        bool                                  // NO_COLOR or --no-color
	Prompt                         func(question string) (string, error) // nil: none can be asked
}

func System() *IOStreams {
	io := &IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr,
		StdinTTY:  term.IsTerminal(int(os.Stdin.Fd())),
		StdoutTTY: term.IsTerminal(int(os.Stdout.Fd())),
		StderrTTY: term.IsTerminal(int(os.Stderr.Fd())),
		NoColor:   os.Getenv("NO_COLOR") != "" || os.Getenv("TERM") == "dumb",
	}
	if io.StdinTTY && io.StderrTTY {
		io.Prompt = io.readLine
	}
	return io
}

func (s *IOStreams) CanPrompt() bool { return s.Prompt != nil }

func (s *IOStreams) Color() bool { return s.StdoutTTY && !s.NoColor }

func (s *IOStreams) readLine(question string) (string, error) {
	if _, err := io.WriteString(s.ErrOut, question); err != nil {
		return "", err
	}
	var line []byte
	buf := make([]byte, 1)
	for {
		n, err := s.In.Read(buf)
		if n > 0 && buf[0] == '\n' {
			break
		}
		line = append(line, buf[:n]...)
		if err == io.EOF {
			break
		}
		if err != nil {
			return "", err
		}
	}
	return string(bytes.TrimSpace(line)), nil
}
