// Package nobgquery keeps bucketctl from asking the terminal for its background colour:
// bubbletea's init would send an OSC 11 query and wait up to 5 s for an answer the styles
// never use. Its path sorts before bubbletea's, so its init runs first and sets it.
package nobgquery

import "github.com/charmbracelet/lipgloss"

func init() { lipgloss.SetHasDarkBackground(true) }
