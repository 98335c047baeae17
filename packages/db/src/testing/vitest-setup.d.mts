/** Path of the global setup that builds the migrated template database once per run. */
export const databaseTemplateSetup: string;
