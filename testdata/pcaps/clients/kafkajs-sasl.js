// What kafkajs 2.2.4 (npm) sent for kafkajs-sasl.pcap: node kafkajs-sasl.js,
// against go run ./internal/testtools/kfakeport -sasl. The admin logs in by
// PLAIN, alice by SCRAM-SHA-256 and bob by SCRAM-SHA-512; bob tries to
// grant himself the cluster, and two logins give a wrong password.
const { Kafka, logLevel, AclResourceTypes, AclOperationTypes, AclPermissionTypes, ResourcePatternTypes } = require('kafkajs')
const client = (id, mechanism, username, password) => new Kafka({ clientId: id, brokers: ['127.0.0.1:29092'], logLevel: logLevel.NOTHING,
  sasl: { mechanism, username, password }, retry: { retries: 0 } })
async function main() {
  const admin = client('kjs-admin', 'plain', 'admin', 'admin-secret').admin()
  await admin.connect()
  await admin.createTopics({ topics: [{ topic: 'sec-t', numPartitions: 1 }] })
  await admin.createAcls({ acl: [
    { resourceType: AclResourceTypes.TOPIC, resourceName: 'sec-t', resourcePatternType: ResourcePatternTypes.LITERAL, principal: 'User:alice', host: '*', operation: AclOperationTypes.WRITE, permissionType: AclPermissionTypes.ALLOW },
    { resourceType: AclResourceTypes.TOPIC, resourceName: 'sec-t', resourcePatternType: ResourcePatternTypes.LITERAL, principal: 'User:alice', host: '*', operation: AclOperationTypes.DESCRIBE, permissionType: AclPermissionTypes.ALLOW } ] })
  const alice = client('kjs-alice', 'scram-sha-256', 'alice', 'alice-secret').producer({ allowAutoTopicCreation: false })
  await alice.connect()
  await alice.send({ topic: 'sec-t', messages: [{ key: 'a', value: 'written by alice' }] }).catch(e => console.log('alice send', e.message))
  await alice.disconnect()
  const bob = client('kjs-bob', 'scram-sha-512', 'bob', 'bob-secret').admin()
  await bob.connect()
  await bob.createAcls({ acl: [{ resourceType: AclResourceTypes.CLUSTER, resourceName: 'kafka-cluster', resourcePatternType: ResourcePatternTypes.LITERAL, principal: 'User:bob', host: '*', operation: AclOperationTypes.ALL, permissionType: AclPermissionTypes.ALLOW }] }).catch(e => console.log('bob createAcls', e.message))
  await bob.disconnect()
  const mallory = client('kjs-mallory', 'scram-sha-256', 'alice', 'not-her-password').admin()
  await mallory.connect().catch(e => console.log('wrong password', e.message))
  const guesser = client('kjs-guesser', 'plain', 'admin', 'wrong-admin-password').admin()
  await guesser.connect().catch(e => console.log('wrong password', e.message))
  await admin.deleteAcls({ filters: [{ resourceType: AclResourceTypes.TOPIC, resourceName: 'sec-t', resourcePatternType: ResourcePatternTypes.LITERAL, principal: 'User:alice', host: '*', operation: AclOperationTypes.ANY, permissionType: AclPermissionTypes.ANY }] })
  await admin.disconnect()
}
main().then(() => process.exit(0), e => { console.error(e); process.exit(1) })
