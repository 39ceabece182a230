// Package connect is where bucketctl chooses its server and connects to it:
//
//   - flags.go, resolve.go: the connection flags, and Resolve, the one function that turns
//     flags, environment (BUCKETCTL_*, REDISCLI_AUTH) and the config file's context into one
//     Server;
//   - parse.go: one parser per form of server (a URL; a list of Cluster seeds or sentinels;
//     a host:port);
//   - redact.go: the one redactor (RedactValue for a value, Redact for a text, Redactor for
//     the secrets known by value) for every place a server or an error can be printed;
//   - client.go, dial.go, hooks.go, replyguard.go: the one place the go-redis client is built
//     (TLS, ACL user, Sentinel, Cluster, time limits), dialled, instrumented and guarded
//     against replies too large to hold;
//   - config.go, config_strict.go, configfile.go: the config file, its strict decoding, its
//     contexts, and edits that keep its comments;
//   - errors.go: the errors of connecting (usage, unreachable, permission).
//
// Nothing here prints: cmd does, through the redactor and tui's escaper.
package connect
