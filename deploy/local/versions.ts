/**
 * The pinned versions live in pom.xml only; this module reads them and derives what depends
 * on them (dist directory names, install keys, logging flavour), so a bump in one place
 * re-installs everything that changed.
 */

export interface MavenCoordinate {
  groupId: string;
  artifactId: string;
  version: string;
}

export type KafkaLogging = 'log4j1' | 'log4j2';

export interface KafkaDist {
  version: string;
  scalaBinary: string;
  binding: MavenCoordinate;
  logging: KafkaLogging;
  /** Both 3.9 and 4.1 still ship the Scala StorageTool in the core jar (checked). */
  storageToolClass: string;
  mainClass: string;
}

export interface ApicurioDist {
  version: string;
  archiveType: string;
}

export interface PinnedVersions {
  kafka: KafkaDist;
  apicurio: ApicurioDist;
  dependencyPlugin: string;
}

/** `<properties>` of a pom as a flat map. Only literal values; `${...}` is left as is. */
export function parsePomProperties(xml: string): Map<string, string> {
  const withoutComments = xml.replace(/<!--[\s\S]*?-->/g, '');
  const block = /<properties>([\s\S]*?)<\/properties>/.exec(withoutComments);
  const props = new Map<string, string>();
  if (!block?.[1]) return props;
  for (const m of block[1].matchAll(/<([A-Za-z0-9_.-]+)>([^<]*)<\/\1>/g)) {
    const [, key, value] = m;
    if (key !== undefined && value !== undefined) props.set(key, value.trim());
  }
  return props;
}

function required(props: Map<string, string>, key: string): string {
  const value = props.get(key);
  if (!value) throw new Error(`pom.xml has no <${key}> property`);
  return value;
}

export function majorOf(version: string): number {
  const major = Number.parseInt(version.split('.')[0] ?? '', 10);
  if (Number.isNaN(major)) throw new Error(`not a version: ${version}`);
  return major;
}

/**
 * `TRIBUTARY_KAFKA_VERSION` swaps the broker (e.g. 4.1.1) without editing the pom; Kafka 4
 * moved from log4j1 to log4j2, so the slf4j binding and log config follow the major version.
 */
export function resolveVersions(props: Map<string, string>, env: NodeJS.ProcessEnv = {}): PinnedVersions {
  const pinnedKafka = required(props, 'kafka.version');
  const kafkaVersion = env['TRIBUTARY_KAFKA_VERSION']?.trim() || pinnedKafka;
  if (!/^\d+\.\d+\.\d+$/.test(kafkaVersion)) {
    throw new Error(`TRIBUTARY_KAFKA_VERSION must look like 3.9.1, got "${kafkaVersion}"`);
  }
  const modern = majorOf(kafkaVersion) >= 4;
  const binding: MavenCoordinate = modern
    ? { groupId: 'org.apache.logging.log4j', artifactId: 'log4j-slf4j-impl', version: required(props, 'log4j2.version') }
    : {
        groupId: required(props, 'slf4j.binding.groupId'),
        artifactId: required(props, 'slf4j.binding.artifactId'),
        version: required(props, 'slf4j.binding.version'),
      };
  return {
    kafka: {
      version: kafkaVersion,
      scalaBinary: required(props, 'scala.binary.version'),
      binding,
      logging: modern ? 'log4j2' : 'log4j1',
      storageToolClass: 'kafka.tools.StorageTool',
      mainClass: 'kafka.Kafka',
    },
    apicurio: {
      version: required(props, 'apicurio.version'),
      archiveType: required(props, 'apicurio.archive.type'),
    },
    dependencyPlugin: required(props, 'maven-dependency-plugin.version'),
  };
}

export const kafkaDistName = (k: KafkaDist): string => `kafka-${k.version}`;
export const apicurioDistName = (a: ApicurioDist): string => `apicurio-${a.version}`;

/** Everything that changes the installed bytes; a different key means re-install. */
export function kafkaInstallKey(k: KafkaDist): string {
  const b = k.binding;
  return `kafka_${k.scalaBinary}:${k.version}+${b.groupId}:${b.artifactId}:${b.version}`;
}

export function apicurioInstallKey(a: ApicurioDist): string {
  return `apicurio-registry-app:${a.version}:all:${a.archiveType}`;
}

/** The `-D` overrides that make the pom build exactly `k` (it may differ from the pom's pins). */
export function kafkaMavenOverrides(k: KafkaDist): string[] {
  return [
    `-Dkafka.version=${k.version}`,
    `-Dslf4j.binding.groupId=${k.binding.groupId}`,
    `-Dslf4j.binding.artifactId=${k.binding.artifactId}`,
    `-Dslf4j.binding.version=${k.binding.version}`,
  ];
}

/** -1, 0, 1 on dotted numeric versions; missing parts count as 0. */
export function compareVersions(a: string, b: string): number {
  const pa = a.split('.').map((x) => Number.parseInt(x, 10) || 0);
  const pb = b.split('.').map((x) => Number.parseInt(x, 10) || 0);
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const d = (pa[i] ?? 0) - (pb[i] ?? 0);
    if (d !== 0) return d < 0 ? -1 : 1;
  }
  return 0;
}
