// Package scripts holds bucketctl's Lua sources, embedded into the binary: the native
// token-bucket script, the multi-tier and reset scripts, the read script, the prelude with
// the one number grammar they share, and the other applications' own scripts, verbatim
// (third_party/apps/, and third_party/NAME/ for a limiter published as a project, with its
// licence and source). The other sub-directories are programs of the repository
// (benchmarks, generated files, pictures); runbook-test.sh is the runbook that make test
// runs end to end (cmd's TestRunbookScript).
package scripts
