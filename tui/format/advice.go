package format

// DeclareHint is the advice that makes a bare number writable: declare its layout (pass
// "" when none or several were guessed).
func DeclareHint(layout string) string {
	if layout == "" {
		return "declare its layout with --layout or a rule in the config file"
	}
	return "declare --layout " + layout + " or a rule in the config file"
}
