# What kafka-python 2.0.2 (Debian 12's python3-kafka, with python3-snappy,
# python3-lz4 and python3-zstandard) sent for kafka-python.pcap: admin and
# ACL calls, a producer of five records for each codec, a consumer group
# reading them back, then producers pinned to Kafka 0.9 and 0.10, which
# send Produce v1 and v2 of MessageSet v0 and v1 (kfake closes those
# connections instead of answering).
from kafka import KafkaAdminClient, KafkaProducer, KafkaConsumer
from kafka.admin import NewTopic, ACL, ACLFilter, ResourcePattern, ResourcePatternFilter, \
    ResourceType, ACLOperation, ACLPermissionType, ACLResourcePatternType, ConfigResource, ConfigResourceType

B = '127.0.0.1:29092'
admin = KafkaAdminClient(bootstrap_servers=B, client_id='py-admin')
admin.create_topics([NewTopic('py-t', num_partitions=3, replication_factor=1)])
admin.create_acls([
    ACL(principal='User:alice', host='*', operation=ACLOperation.READ, permission_type=ACLPermissionType.ALLOW,
        resource_pattern=ResourcePattern(ResourceType.TOPIC, 'py-t')),
    ACL(principal='User:bob', host='10.0.0.7', operation=ACLOperation.WRITE, permission_type=ACLPermissionType.DENY,
        resource_pattern=ResourcePattern(ResourceType.GROUP, 'py-', ACLResourcePatternType.PREFIXED)),
])
admin.describe_acls(ACLFilter(principal=None, host='*', operation=ACLOperation.ANY,
                              permission_type=ACLPermissionType.ANY,
                              resource_pattern=ResourcePatternFilter(ResourceType.ANY, None, ACLResourcePatternType.ANY)))
admin.describe_configs([ConfigResource(ConfigResourceType.TOPIC, 'py-t')])

for p, c in enumerate([None, 'gzip', 'snappy', 'lz4', 'zstd']):
    pr = KafkaProducer(bootstrap_servers=B, client_id='py-producer-%s' % c, compression_type=c, linger_ms=50)
    for i in range(5):
        pr.send('py-t', key=b'key-%d' % i, value=(b'kafka-python %s record %d ' % (str(c).encode(), i)) * 8,
                headers=[('origin', b'kafka-python')], partition=p % 3)
    pr.flush()
    pr.close()

cons = KafkaConsumer('py-t', bootstrap_servers=B, client_id='py-consumer', group_id='py-group',
                     auto_offset_reset='earliest', enable_auto_commit=False, consumer_timeout_ms=4000)
for n, _ in enumerate(cons, 1):
    if n == 25:
        break
cons.commit()
cons.close()

admin.delete_acls([ACLFilter(principal='User:bob', host='10.0.0.7', operation=ACLOperation.ANY,
                             permission_type=ACLPermissionType.ANY,
                             resource_pattern=ResourcePatternFilter(ResourceType.ANY, None, ACLResourcePatternType.ANY))])
admin.list_consumer_groups()
admin.delete_topics(['py-t'])
admin.close()

for ver in [(0, 9), (0, 10, 1)]:
    for c in [None, 'gzip', 'snappy', 'lz4']:
        pr = KafkaProducer(bootstrap_servers=B, client_id='py-legacy-%s-%s' % ('.'.join(map(str, ver)), c),
                           api_version=ver, compression_type=c, linger_ms=20, retries=0,
                           request_timeout_ms=2000, max_block_ms=3000)
        for i in range(3):
            pr.send('t1', key=b'k%d' % i, value=(b'legacy %s %s record %d ' % (str(ver).encode(), str(c).encode(), i)) * 6,
                    partition=0)
        pr.flush(timeout=3)
        pr.close(timeout=2)
