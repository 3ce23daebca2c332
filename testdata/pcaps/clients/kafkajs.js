// What kafkajs 2.2.4 (npm) sent for kafkajs.pcap: node kafkajs.js, against
// go run ./internal/testtools/kfakeport.
const { Kafka, CompressionTypes, logLevel, AclResourceTypes, AclOperationTypes, AclPermissionTypes, ResourcePatternTypes, ConfigResourceTypes } = require('kafkajs')
const cfg = { clientId: 'kjs-client', brokers: ['127.0.0.1:29092'], logLevel: logLevel.NOTHING }
const kafka = new Kafka(cfg)
async function main() {
  const admin = kafka.admin()
  await admin.connect()
  await admin.createTopics({ topics: [{ topic: 'js-topic', numPartitions: 2 }] })
  await admin.fetchTopicMetadata({ topics: ['js-topic'] })
  await admin.describeConfigs({ resources: [{ type: ConfigResourceTypes.TOPIC, name: 'js-topic' }], includeSynonyms: false })
  await admin.alterConfigs({ resources: [{ type: ConfigResourceTypes.TOPIC, name: 'js-topic', configEntries: [{ name: 'retention.ms', value: '1000000' }] }] }).catch(e => console.log('alterConfigs', e.message))
  await admin.createAcls({ acl: [{ resourceType: AclResourceTypes.TOPIC, resourceName: 'js-topic', resourcePatternType: ResourcePatternTypes.LITERAL, principal: 'User:bob', host: '*', operation: AclOperationTypes.READ, permissionType: AclPermissionTypes.ALLOW }] }).catch(e => console.log('createAcls', e.message))
  await admin.describeAcls({ resourceType: AclResourceTypes.ANY, resourcePatternType: ResourcePatternTypes.ANY, operation: AclOperationTypes.ANY, permissionType: AclPermissionTypes.ANY }).catch(e => console.log('describeAcls', e.message))
  await admin.deleteAcls({ filters: [{ resourceType: AclResourceTypes.TOPIC, resourceName: 'js-topic', resourcePatternType: ResourcePatternTypes.LITERAL, principal: 'User:bob', host: '*', operation: AclOperationTypes.ANY, permissionType: AclPermissionTypes.ANY }] }).catch(e => console.log('deleteAcls', e.message))
  await admin.createPartitions({ topicPartitions: [{ topic: 'js-topic', count: 3 }] }).catch(e => console.log('createPartitions', e.message))
  const producer = kafka.producer({ allowAutoTopicCreation: true })
  await producer.connect()
  for (const c of [CompressionTypes.None, CompressionTypes.GZIP]) {
    await producer.send({ topic: 'js-topic', compression: c, messages: [
      { key: 'k1', value: 'hello from kafkajs ' + c, headers: { h1: 'v1' } },
      { key: null, value: Buffer.from([0, 1, 2, 255]) },
      { key: 'k3', value: null } ] })
  }
  const tp = kafka.producer({ transactionalId: 'js-txn', idempotent: true, maxInFlightRequests: 1 })
  await tp.connect()
  const tx = await tp.transaction()
  await tx.send({ topic: 'js-topic', messages: [{ key: 'tx', value: 'in a transaction' }] })
  await tx.commit()
  await tp.disconnect()
  const consumer = kafka.consumer({ groupId: 'js-group' })
  await consumer.connect()
  await consumer.subscribe({ topic: 'js-topic', fromBeginning: true })
  let n = 0
  await new Promise((resolve) => {
    consumer.run({ eachMessage: async () => { n++; if (n >= 7) resolve() } })
    setTimeout(resolve, 8000)
  })
  console.log('consumed', n)
  await consumer.disconnect()
  await admin.fetchOffsets({ groupId: 'js-group', topics: ['js-topic'] }).catch(e => console.log('fetchOffsets', e.message))
  await admin.describeGroups(['js-group']).catch(e => console.log('describeGroups', e.message))
  await admin.listGroups().catch(e => console.log('listGroups', e.message))
  await admin.deleteGroups(['js-group']).catch(e => console.log('deleteGroups', e.message))
  await admin.deleteTopicRecords({ topic: 'js-topic', partitions: [{ partition: 0, offset: '1' }] }).catch(e => console.log('deleteRecords', e.message))
  await admin.deleteTopics({ topics: ['js-topic'] })
  await producer.disconnect()
  await admin.disconnect()
}
main().then(() => process.exit(0)).catch(e => { console.error('ERR', e); process.exit(1) })
