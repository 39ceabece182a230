// Package termtest is a small terminal for tests: it replays what programs wrote to a
// terminal and returns what a person would see, so a test can tell text that was drawn
// and then erased (by a cursor move and an erase sequence) from text that stays.
//
// It knows what bubbletea's inline renderer and plain printing send: printable text with
// autowrap, CR, LF, backspace, cursor moves (CUU, CUD, CUF, CUB, CUP, CHA), erase in line
// (EL) and in display (ED). SGR sets each cell's style (Cells returns them, for pictures of
// the screen); private modes and OSC strings are read and ignored. Every rune is taken to be
// one cell wide.
package termtest
