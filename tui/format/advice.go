package format

// DeclareHint is how an operator makes a lone bare number a bucket that may be written:
// declare its layout (layout "" when none was guessed, or several were). It is the one
// wording of that advice, in table notes, the TUI, the reset notes and the errors.
func DeclareHint(layout string) string {
	if layout == "" {
		return "declare its layout with --layout or a rule in the config file"
	}
	return "declare --layout " + layout + " or a rule in the config file"
}
