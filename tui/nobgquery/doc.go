// Package nobgquery keeps bucketctl from asking the terminal for its background colour at
// start-up.
//
// bubbletea v1's package init calls lipgloss.HasDarkBackground, which writes an OSC 11
// query to a terminal on stdout and waits up to 5 s for the answer. Every command paid it,
// `version` and `-o json` included, and a terminal that does not answer (script(1), some
// CI and serial consoles) stalled each of them for the whole 5 s. bucketctl's styles use no
// adaptive colours, so the answer is never used.
//
// Go initialises packages in import-path order once their imports are: this package
// imports lipgloss only and sorts before github.com/charmbracelet/bubbletea, so its init
// runs first and tells lipgloss the background, which lipgloss then never queries.
package nobgquery
