// Package rediserr reads the errors of go-redis and of bucketctl's scripts the way a person
// needs them: unreachable or slow, refused by the ACL (which command), refusing every write.
package rediserr
