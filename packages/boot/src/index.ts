export { envBool, envEnum, envInt, envList, envText, presentText, urlCheck } from './envVars.js';
export type { EnvVar, IntOptions, ListOptions, RawEnvValue, TextOptions, Unset } from './envVars.js';
export { configError, envProblems, parseEnv, showValue, variableProblem, whenValid } from './parseEnv.js';
export type { ConfigError, ConfigProblem, ConfigResult, Env, ParseEnvOptions } from './parseEnv.js';
export { ExitCode } from './exitCodes.js';
export { exitOnConfigError } from './exitOnConfigError.js';
export type { BootLog } from './exitOnConfigError.js';
export { FaultPolicy } from './FaultPolicy.js';
export type { FaultKind, FaultPolicyOptions, FaultSource } from './FaultPolicy.js';
