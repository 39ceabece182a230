package cmd

import (
	"embed"
	"strings"

	"github.com/spf13/cobra"
)

// The texts of 'bucketctl help TOPIC' (topics/) and the long help of the commands with
// the most to say (help/).
//
//go:embed topics/*.txt help/*.txt
var topicFiles embed.FS

// helpTopics are the topics, in the order 'bucketctl help' lists them.
var helpTopics = []struct{ name, short string }{
	{"environment", "Connecting: URLs, Cluster, Sentinel, passwords, BUCKETCTL_* variables"},
	{"config-file", "The config file: contexts, layouts and rules"},
	{"formats", "Output formats, how numbers are written and parsed, JSON fields"},
	{"exit-codes", "Exit codes of every command"},
	{"safety", "What bucketctl will change, and what it never touches"},
	{"layouts", "Other applications' buckets: layouts, GCRA, fidelity"},
	{"commands", "Each command in detail: costs, findings, views, load's safety"},
	{"cluster", "Redis Cluster, Sentinel, TLS and least-privilege ACLs"},
	{"library", "The bucket package as a Go library, and its HTTP middleware"},
	{"performance", "Measured figures and the commands that produce them"},
	{"design", "Design choices, and why"},
}

// topicText is the text of a help topic, its placeholders filled.
func topicText(name string) string {
	return fillTopic(strings.TrimRight(embedded("topics/"+name+".txt"), "\n"))
}

func commandHelp(name string) string { return strings.TrimSuffix(embedded("help/"+name+".txt"), "\n") }

func embedded(path string) string {
	b, err := topicFiles.ReadFile(path)
	if err != nil {
		panic(path + " is not embedded")
	}
	return string(b)
}

func newCmdTopic(name, short string) *cobra.Command {
	return &cobra.Command{Use: name, Short: short, Long: topicText(name)}
}

// topicUsage is cobra's usage template with the topics aligned and how to read one.
func topicUsage(tmpl string) string {
	tmpl = strings.Replace(tmpl, "{{rpad .CommandPath .CommandPathPadding}}", "{{rpad .CommandPath 22}}", 1)
	return strings.Replace(tmpl, `Use "{{.CommandPath}} [command] --help" for more information about a command.`,
		`Use "{{.CommandPath}} [command] --help" for more information about a command.{{if .HasHelpSubCommands}}
Use "bucketctl help <topic>" to read a help topic.{{end}}`, 1)
}
