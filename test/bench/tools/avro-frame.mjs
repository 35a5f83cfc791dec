// What framing one record in the Confluent wire format costs: avsc's toBuffer behind a separate
// header (what AvroCodec.encode did) against frameAvro (shared/src/avro-frame.ts), for random
// deliveries with bodies of a given size. Build shared first (npx turbo run build), then:
//   node test/bench/tools/avro-frame.mjs [bodyBytes=600,2000,8000] [records=200000]
import { avroType } from '../../../schemas/dist/index.js';
import { frameAvro } from '../../../shared/dist/avro-frame.js';

const sizes = (process.argv[2] ?? '600,2000,8000').split(',').map(Number);
const records = Number(process.argv[3] ?? 200_000);
const type = avroType('delivery');
const stringFields = type.fields.filter((field) => field.type.typeName === 'string').map((field) => field.name);

function viaToBuffer(value) {
  const header = Buffer.allocUnsafe(5);
  header.writeUInt8(0, 0);
  header.writeUInt32BE(7, 1);
  const body = type.toBuffer(value);
  return Buffer.concat([header, body], 5 + body.length);
}

function time(encode, values) {
  const started = performance.now();
  let bytes = 0;
  for (let i = 0; i < records; i++) bytes += encode(values[i % values.length]).length;
  return { microsPerRecord: (1000 * (performance.now() - started)) / records, bytes };
}

for (const size of sizes) {
  const values = Array.from({ length: 100 }, () => {
    const value = type.random();
    // The longest string field carries the body; the others stay as random gave them.
    value[stringFields[0]] = 'x'.repeat(size);
    return value;
  });
  // Warm both paths, then alternate them so that neither runs on a cooler machine.
  time(viaToBuffer, values);
  time((value) => frameAvro(type, 7, value), values);
  const runs = { toBuffer: [], frameAvro: [] };
  for (let round = 0; round < 3; round++) {
    runs.toBuffer.push(time(viaToBuffer, values).microsPerRecord);
    runs.frameAvro.push(time((value) => frameAvro(type, 7, value), values).microsPerRecord);
  }
  const best = (list) => Math.min(...list).toFixed(2);
  console.log(`${size}-byte string field (${viaToBuffer(values[0]).length} bytes framed): toBuffer + concat ${best(runs.toBuffer)} µs, frameAvro ${best(runs.frameAvro)} µs per record (best of 3 × ${records.toLocaleString('en')})`);
}
