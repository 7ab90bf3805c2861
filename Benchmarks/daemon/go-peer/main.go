// The peer the socket API is measured against: Go's net/http on a Unix socket, answering every
// request with the body geoattrd gave for the same request (read from a file), its content type
// and an entity tag, with keep-alive, as a plain Go service would.
// Usage: go-peer SOCKET BODY-FILE
package main

import (
	"fmt"
	"net"
	"net/http"
	"os"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: go-peer SOCKET BODY-FILE")
		os.Exit(64)
	}
	body, err := os.ReadFile(os.Args[2])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(66)
	}
	listener, err := net.Listen("unix", os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(69)
	}
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		header := w.Header()
		header["Content-Type"] = []string{"application/json"}
		header["Etag"] = []string{`"1-exact"`}
		w.Write(body)
	})
	if err := http.Serve(listener, handler); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
