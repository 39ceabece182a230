package cmd

import "github.com/spf13/cobra"

// NewCmdCompletion is cobra's default completion command, built on a stand-in root and
// adopted (its subcommands generate for cmd.Root()), with examples.
func NewCmdCompletion(f *Factory) *cobra.Command {
	standIn := &cobra.Command{Use: "bucketctl"}
	standIn.SetOut(f.IO.Out)
	standIn.AddCommand(&cobra.Command{Use: "stand-in", Run: func(*cobra.Command, []string) {}})
	standIn.InitDefaultCompletionCmd()
	comp, _, err := standIn.Find([]string{"completion"})
	if err != nil || comp == standIn {
		panic("gen: cobra made no completion command to copy")
	}
	standIn.RemoveCommand(comp)
	comp.Example = `  # bash (needs the bash-completion package): this shell, then every new one
  source <(bucketctl completion bash)
  mkdir -p ~/.local/share/bash-completion/completions
  bucketctl completion bash > ~/.local/share/bash-completion/completions/bucketctl

  # zsh (with compinit), fish, PowerShell
  bucketctl completion zsh > "${fpath[1]}/_bucketctl"
  bucketctl completion fish > ~/.config/fish/completions/bucketctl.fish
  bucketctl completion powershell | Out-String | Invoke-Expression`
	return comp
}
