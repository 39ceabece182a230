// Package connect is where bucketctl chooses its server and connects to it:
//
//   - resolve.go: the connection flags, their BUCKETCTL_* variables, and Resolve, the one
//     place flags, environment and the config file's context become one Server;
//   - parse.go: one parser per form of server (a URL, a list of addresses, a host:port);
//   - redact.go: secrets found by form and by value (Redactor), for every printed text;
//   - client.go, replyguard.go: the Server's one go-redis client, guarded against huge replies;
//   - config.go, configread.go, configfile.go: the config file, read strictly, edited in place;
//   - dial.go: the first check that the server answers, the errors of connecting (usage,
//     unreachable, permission) and the ACL hook.
//
// Nothing here prints: cmd does, through the redactor and tui's escaper.
package connect
