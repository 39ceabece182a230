// Package rediserr reads the errors of go-redis and of bucketctl's scripts the way a person
// needs them: Redis unreachable or only slow, refused by the ACL (and which command), a
// server refusing every write alike (NOREPLICAS, READONLY, OOM, MISCONF), a reply without the
// script trailer Redis appends.
package rediserr
