/** Reading a running service's /metrics in tests. */

/** The sum of a Prometheus series' samples whose labels include `labels` (0 when none). */
export async function metricValue(baseUrl: string, name: string, labels: Record<string, string> = {}): Promise<number> {
  const text = await (await fetch(`${baseUrl}/metrics`)).text();
  const wanted = Object.entries(labels).map(([label, value]) => `${label}="${value}"`);
  let total = 0;
  for (const line of text.split('\n')) {
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const present = (match[3] ?? '').split(',');
    if (wanted.every((pair) => present.includes(pair))) total += Number(match[4]);
  }
  return total;
}
