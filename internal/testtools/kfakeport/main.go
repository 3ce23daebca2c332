// Command kfakeport runs franz-go's in-process kfake broker on a fixed
// port until interrupted, for clients that are not Go programs (kafkajs,
// librdkafka's kcat, kafka-node): the captures testdata/pcaps/kafkajs.pcap,
// librdkafka.pcap, kafka-node.pcap and kafka-python.pcap were taken against it (see
// testdata/pcaps/README.md).
//
//	go run ./internal/testtools/kfakeport -port 29092
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
	flag.Parse()
	c, err := kfake.NewCluster(kfake.Ports(*port), kfake.SeedTopics(3, "t1", "t2"), kfake.AllowAutoTopicCreation())
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
