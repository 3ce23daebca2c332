// What kafkajs 2.2.4 (npm) sent for kafkajs-sasl-tls.pcap: node
// --tls-keylog=kafkajs-sasl-tls.keylog kafkajs-sasl-tls.js DIR, against go run
// ./internal/testtools/kfakeport -sasl -tls DIR. SASL inside TLS 1.3: the admin logs in by
// PLAIN (its password encrypted on the wire, in the clear to whoever has the key log) and grants
// alice WRITE; alice logs in by SCRAM-SHA-256 and produces; a PLAIN login with a wrong password
// goes unanswered.
const fs = require('fs')
const path = require('path')
const { Kafka, logLevel, AclResourceTypes, AclOperationTypes, AclPermissionTypes, ResourcePatternTypes } = require('kafkajs')
const dir = process.argv[2]
const ssl = { ca: [fs.readFileSync(path.join(dir, 'ca.pem'))] }
const client = (id, mechanism, username, password) => new Kafka({ clientId: id, brokers: ['127.0.0.1:29092'], logLevel: logLevel.NOTHING,
  retry: { retries: 0 }, ssl, sasl: { mechanism, username, password } })
async function main() {
  const admin = client('kjs-admin', 'plain', 'admin', 'admin-secret').admin()
  await admin.connect()
  await admin.createAcls({ acl: [{ resourceType: AclResourceTypes.TOPIC, resourceName: 't1', resourcePatternType: ResourcePatternTypes.LITERAL,
    principal: 'User:alice', host: '*', operation: AclOperationTypes.WRITE, permissionType: AclPermissionTypes.ALLOW }] })
  const alice = client('kjs-alice', 'scram-sha-256', 'alice', 'alice-secret').producer()
  await alice.connect()
  await alice.send({ topic: 't1', messages: [{ key: 'a', value: 'written by alice over TLS' }] })
  await alice.disconnect()
  const guesser = client('kjs-guesser', 'plain', 'admin', 'wrong-admin-password').admin()
  await guesser.connect().catch(e => console.log('wrong password', e.message))
  await admin.disconnect()
}
main().then(() => process.exit(0), e => { console.error(e); process.exit(1) })
