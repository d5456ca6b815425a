// ferretdb-test: a MongoDB wire-protocol server for saasbench's MongoDB integration tests.
// It embeds FerretDB (github.com/FerretDB/FerretDB/ferretdb) with its SQLite backend, so the
// tests talk to a real MongoDB-protocol server without a MongoDB download.
//
//	ferretdb-test -listen 127.0.0.1:27017 -dir /tmp/data
//
// It prints "listening <addr>" once it accepts connections and stops on SIGINT/SIGTERM.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/FerretDB/FerretDB/ferretdb"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:27017", "TCP address to listen on")
	dir := flag.String("dir", "", "directory for the SQLite files (required)")
	flag.Parse()
	if *dir == "" {
		fmt.Fprintln(os.Stderr, "ferretdb-test: -dir is required")
		os.Exit(2)
	}
	if err := os.MkdirAll(*dir, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, "ferretdb-test:", err)
		os.Exit(1)
	}
	f, err := ferretdb.New(&ferretdb.Config{
		Listener:  ferretdb.ListenerConfig{TCP: *listen},
		Logger:    slog.New(slog.NewTextHandler(io.Discard, nil)),
		Handler:   "sqlite",
		SQLiteURL: "file:" + *dir + "/",
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "ferretdb-test:", err)
		os.Exit(1)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		// announce readiness once the port accepts connections
		for ctx.Err() == nil {
			if c, err := net.DialTimeout("tcp", *listen, 200*time.Millisecond); err == nil {
				c.Close()
				fmt.Println("listening", *listen)
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
	}()
	if err := f.Run(ctx); err != nil && ctx.Err() == nil {
		fmt.Fprintln(os.Stderr, "ferretdb-test:", err)
		os.Exit(1)
	}
}
