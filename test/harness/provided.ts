/** What the integration global set-up provides to tests (`inject('kafkaBrokers')`). */
declare module 'vitest' {
  export interface ProvidedContext {
    kafkaBrokers: string[];
    schemaRegistryUrl: string;
  }
}

export {};
