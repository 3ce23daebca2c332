// What kafka-node 5.0.0 (npm) sent for kafka-node.pcap: node kafka-node.js,
// against go run ./internal/testtools/kfakeport.
const kafka = require('kafka-node')
const client = new kafka.KafkaClient({ kafkaHost: '127.0.0.1:29092', clientId: 'kn-client' })
const producer = new kafka.Producer(client)
producer.on('error', e => { console.log('perr', e.message) })
producer.on('ready', () => {
  producer.send([
    { topic: 't1', messages: ['plain one', new kafka.KeyedMessage('key1', 'keyed two')], partition: 0, attributes: 0 },
    { topic: 't1', messages: ['gzipped a', 'gzipped b', 'gzipped c'], partition: 1, attributes: 1 },
  ], (err, data) => {
    console.log('sent', err && err.message, JSON.stringify(data))
    const consumer = new kafka.Consumer(client, [{ topic: 't1', partition: 0, offset: 0 }, { topic: 't1', partition: 1, offset: 0 }], { autoCommit: false, fromOffset: true, fetchMaxWaitMs: 100 })
    let n = 0
    consumer.on('message', m => { n++; if (n == 5) { console.log('got 5'); consumer.close(true, () => client.close(() => process.exit(0))) } })
    consumer.on('error', e => console.log('cerr', e.message))
    setTimeout(() => { console.log('timeout', n); process.exit(0) }, 8000)
  })
})
