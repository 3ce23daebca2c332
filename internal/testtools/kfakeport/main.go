// Command kfakeport runs franz-go's in-process kfake broker on a fixed
// port until interrupted, for clients that are not Go programs (kafkajs,
// librdkafka's kcat, kafka-node, kafka-python): the captures in
// testdata/pcaps/ named after them were taken against it (see
// testdata/pcaps/README.md).
//
//	go run ./internal/testtools/kfakeport -port 29092 [-sasl] [-tls DIR]  (both: SASL inside TLS)
//
// With -sasl every connection must log in, with ACLs checked: the superuser
// admin/admin-secret by PLAIN, alice/alice-secret by SCRAM-SHA-256 and
// bob/bob-secret by SCRAM-SHA-512, alice and bob with no ACL of their own.
// With -tls it speaks TLS with the throwaway certificates of
// internal/testtools/traffic, asks each client for a certificate (kfake
// authorizes none by it), and writes ca.pem, client.pem and client-key.pem
// to DIR for the client.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/signal"

	"github.com/twmb/franz-go/pkg/kfake"
)

func main() {
	port := flag.Int("port", 29092, "the port to listen on, on every address")
	sasl := flag.Bool("sasl", false, "require SASL (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512) and check ACLs")
	tlsDir := flag.String("tls", "", "listen with TLS, asking for a client certificate, and write the CA and a client's certificate and key to this directory")
	flag.Parse()
	opts := []kfake.Opt{kfake.Ports(*port), kfake.SeedTopics(3, "t1", "t2"), kfake.AllowAutoTopicCreation()}
	// TLS, then (with -sasl) the rewriting of handshake answers on the
	// plaintext beneath it: kfake's own TLS option would wrap the listener
	// after ListenFn's, and the rewriting would see ciphertext.
	var l listener
	if *tlsDir != "" {
		tc, err := serverTLS(*tlsDir)
		if err != nil {
			fmt.Fprintln(os.Stderr, "kfakeport:", err)
			os.Exit(1)
		}
		l.tls = tc
	}
	l.mechanisms = *sasl
	opts = append(opts, kfake.ListenFn(l.listen))
	if *sasl {
		opts = append(opts, kfake.EnableSASL(), kfake.EnableACLs(),
			kfake.Superuser("PLAIN", "admin", "admin-secret"),
			kfake.User("SCRAM-SHA-256", "alice", "alice-secret"),
			kfake.User("SCRAM-SHA-512", "bob", "bob-secret"))
	}
	c, err := kfake.NewCluster(opts...)
	if err != nil {
		fmt.Fprintln(os.Stderr, "kfakeport:", err)
		os.Exit(1)
	}
	defer c.Close()
	fmt.Println("kfake listening on", c.ListenAddrs())
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, os.Interrupt)
	<-ch
}
