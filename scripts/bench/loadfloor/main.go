package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/bucketctl/bucketctl/scripts/bench/loopback"
)

func main() {
	conc := flag.Int("c", 64, "connections")
	n := flag.Int64("n", 100000, "decisions")
	pipe := flag.Int("P", 1, "commands a round trip")
	sha := flag.String("sha", "", "the script's SHA1")
	client := flag.String("client", "resp", "resp or go-redis")
	opt := *loopback.Client("loadfloor", *conc+1).Options()
	opt.Protocol = 2 // as load's workers: go-redis peeks at a RESP3 socket before every command
	rdb := redis.NewClient(&opt)
	args := flag.Args()
	if *sha == "" || len(args) == 0 || (*client != "resp" && *client != "go-redis") || *pipe < 1 {
		fmt.Fprintln(os.Stderr, "usage: loadfloor -sha SHA [-client resp|go-redis] [-c 64] [-n 100000] [-P 1] KEY [ARG...]")
		os.Exit(2)
	}
	runtime.GOMAXPROCS(1) // as load against a local server on two cores
	ctx := context.Background()
	workers := make([]func(int) error, *conc)
	for i := range workers {
		var err error
		if *client == "resp" {
			workers[i], err = respWorker(rdb.Options().Addr, *sha, args)
		} else {
			workers[i], err = goRedisWorker(ctx, rdb, *sha, args)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "loadfloor:", err)
			os.Exit(1)
		}
	}
	var claimed atomic.Int64
	var wg sync.WaitGroup
	var failed atomic.Pointer[error]
	start := time.Now()
	for _, w := range workers {
		wg.Go(func() {
			for {
				from := claimed.Add(int64(*pipe)) - int64(*pipe)
				k := min(int64(*pipe), *n-from)
				if k <= 0 {
					return
				}
				if err := w(int(k)); err != nil {
					failed.CompareAndSwap(nil, &err)
					return
				}
			}
		})
	}
	wg.Wait()
	if err := failed.Load(); err != nil {
		fmt.Fprintln(os.Stderr, "loadfloor:", *err)
		os.Exit(1)
	}
	fmt.Printf("%.2f decisions/s\n", float64(*n)/time.Since(start).Seconds())
}

// goRedisWorker sends k EvalSha a round trip on a connection of its own.
func goRedisWorker(ctx context.Context, rdb *redis.Client, sha string, args []string) (func(int) error, error) {
	cn := rdb.Conn()
	if err := cn.Ping(ctx).Err(); err != nil {
		return nil, err
	}
	keys, argv := args[:1], make([]interface{}, len(args)-1)
	for i, a := range args[1:] {
		argv[i] = a
	}
	return func(k int) error {
		if k == 1 {
			return cn.EvalSha(ctx, sha, keys, argv...).Err()
		}
		_, err := cn.Pipelined(ctx, func(p redis.Pipeliner) error {
			for range k {
				p.EvalSha(ctx, sha, keys, argv...)
			}
			return nil
		})
		return err
	}, nil
}

// respWorker writes k copies of the command and skips k replies, each a bulk string or an
// integer; any other reply is an error.
func respWorker(addr, sha string, args []string) (func(int) error, error) {
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		return nil, err
	}
	words := append([]string{"EVALSHA", sha, "1"}, args...)
	cmd := []byte("*" + strconv.Itoa(len(words)) + "\r\n")
	for _, w := range words {
		cmd = append(cmd, "$"+strconv.Itoa(len(w))+"\r\n"+w+"\r\n"...)
	}
	var out []byte
	r := bufio.NewReader(conn)
	return func(k int) error {
		out = out[:0]
		for range k {
			out = append(out, cmd...)
		}
		if _, err := conn.Write(out); err != nil {
			return err
		}
		for range k {
			line, err := r.ReadSlice('\n')
			if err != nil {
				return err
			}
			switch line[0] {
			case ':':
			case '$':
				size, err := strconv.Atoi(string(line[1 : len(line)-2]))
				if err != nil {
					return err
				}
				if _, err := r.Discard(size + 2); err != nil {
					return err
				}
			default:
				return errors.New("reply " + strings.TrimSpace(string(line)))
			}
		}
		return nil
	}, nil
}
