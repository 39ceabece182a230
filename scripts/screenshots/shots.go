package main

import "time"

// demoKey is the demo's hot bucket, the one the pictures watch.
const demoKey = "demo:api:scraper:203.0.113.9"

// shot is one picture: the bucketctl arguments that draw it (after --url SANDBOX, but for
// the demo itself), when to take it, and what must be on the screen by then.
type shot struct {
	file  string
	title string   // the command shown above the picture
	args  []string // bucketctl's arguments; "demo" runs the sandbox itself
	after time.Duration
	wait  string // text the screen shows once it is worth a picture
	final bool   // the picture is what stays after the command ends (a report)
}

// shots are the pictures, in the order they are taken while the demo runs.
var shots = []shot{
	{file: "top.svg", title: "bucketctl demo", args: []string{"demo"}, after: 6 * time.Second, wait: "sort busy"},
	{file: "watch.svg", title: "bucketctl watch " + demoKey, args: []string{"watch", demoKey}, after: 8 * time.Second, wait: "TTL"},
	{file: "load-live.svg", title: "bucketctl load api --capacity 50 --rate 100/s -c 16 -d 6s",
		args: []string{"load", "api", "--capacity", "50", "--rate", "100/s", "-c", "16", "-d", "6s"}, after: 4 * time.Second, wait: "allowed"},
	{file: "load-report.svg", title: "bucketctl load api --capacity 50 --rate 100/s -c 16 -d 6s",
		args: []string{"load", "api", "--capacity", "50", "--rate", "100/s", "-c", "16", "-d", "6s"}, final: true, wait: "allowed"},
}
