// What kafkajs 2.2.4 (npm) sent for kafkajs-tls.pcap: node --tls-keylog=kafkajs-tls.keylog
// kafkajs-tls.js DIR, against go run ./internal/testtools/kfakeport -tls DIR, which writes the
// CA and the client's certificate (CN=svc-payments) and key to DIR. Node's TLS is OpenSSL's:
// TLS 1.3, the client certificate sent encrypted, then a producer held to TLS 1.2, whose
// certificate goes in the clear.
const fs = require('fs')
const path = require('path')
const { Kafka, logLevel, AclResourceTypes, AclOperationTypes, AclPermissionTypes, ResourcePatternTypes } = require('kafkajs')
const dir = process.argv[2]
const ssl = { ca: [fs.readFileSync(path.join(dir, 'ca.pem'))], cert: fs.readFileSync(path.join(dir, 'client.pem')),
  key: fs.readFileSync(path.join(dir, 'client-key.pem')) }
const client = (id, tls) => new Kafka({ clientId: id, brokers: ['127.0.0.1:29092'], logLevel: logLevel.NOTHING, retry: { retries: 0 }, ssl: tls })
const kafka = client('kjs-tls', ssl)
async function main() {
  const admin = kafka.admin()
  await admin.connect()
  await admin.createAcls({ acl: [{ resourceType: AclResourceTypes.TOPIC, resourceName: 'payments', resourcePatternType: ResourcePatternTypes.PREFIXED,
    principal: 'User:CN=svc-payments,OU=payments,O=Example Corp,L=Zurich,C=CH', host: '*', operation: AclOperationTypes.WRITE, permissionType: AclPermissionTypes.ALLOW }] })
  await admin.deleteAcls({ filters: [{ resourceType: AclResourceTypes.TOPIC, resourceName: 'payments', resourcePatternType: ResourcePatternTypes.PREFIXED,
    principal: 'User:CN=svc-payments,OU=payments,O=Example Corp,L=Zurich,C=CH', host: '*', operation: AclOperationTypes.ANY, permissionType: AclPermissionTypes.ANY }] })
  const producer = kafka.producer()
  await producer.connect()
  await producer.send({ topic: 't1', messages: [{ key: 'k', value: 'over TLS from kafkajs' }] })
  await producer.disconnect()
  const old = client('kjs-tls12', { ...ssl, maxVersion: 'TLSv1.2' }).producer()
  await old.connect()
  await old.send({ topic: 't1', messages: [{ key: 'k', value: 'over TLS 1.2 from kafkajs' }] })
  await old.disconnect()
  await admin.disconnect()
}
main().then(() => process.exit(0), e => { console.error(e); process.exit(1) })
