export { envBool, envEnum, envInt, envList, envText, presentText, urlCheck } from './envVars.js';
export type { EnvVar, RawEnvValue } from './envVars.js';
export { configError, envProblems, parseEnv, whenValid } from './parseEnv.js';
export type { ConfigError, ConfigProblem, ConfigResult, Env } from './parseEnv.js';
export { ExitCode } from './exitCodes.js';
export { exitOnConfigError } from './exitOnConfigError.js';
export { FaultPolicy } from './FaultPolicy.js';
export type { FaultKind } from './FaultPolicy.js';
