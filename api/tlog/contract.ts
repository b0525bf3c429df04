/**
 * The transparency log's routes (docs/hash-chain.md §10): its verifier key, its latest signed
 * checkpoint, and inclusion and consistency proofs (RFC 9162) over its tree. Public, as a
 * transparency log is: they show hashes, sizes and signatures, never a record's content.
 */
import { z } from 'zod';
import { defineRoute } from '../contract';
import { Operation } from '../../lib/platform/scopes';

/** A tree size or leaf index in a query: digits only, a safe integer. */
const index = (what: string) =>
  z
    .string()
    .regex(/^\d{1,16}$/, `must be ${what}: a non-negative integer in decimal digits`)
    .transform(Number)
    .refine((n) => Number.isSafeInteger(n), `must be ${what} no larger than ${Number.MAX_SAFE_INTEGER}`);

const base64Hash = z.string().regex(/^[A-Za-z0-9+/]{43}=$/).describe('a SHA-256 hash, standard base64');

export const getLogKey = defineRoute({
  method: 'get',
  path: '/v1/log/key',
  tag: 'log',
  summary: 'The log\'s verifier key, as a C2SP signed-note key string `<name>+<hex id>+<base64 key>` (text/plain)',
  scopes: Operation.Public,
  contentType: 'text/plain',
  responses: { 200: z.string() },
  errors: [503],
});

export const getLogCheckpoint = defineRoute({
  method: 'get',
  path: '/v1/log/checkpoint',
  tag: 'log',
  summary: 'The latest checkpoint: a C2SP tlog-checkpoint (`<origin>\\n<size>\\n<base64 root>\\n`) signed as a C2SP signed note, with the witnesses\' cosignatures it got (text/plain)',
  description:
    'Default: the newest checkpoint the log signed, with whatever cosignatures (C2SP cosignature/v1) the witnesses of LOG_WITNESSES gave it so far (none yet, or none configured: the log\'s signature only). ' +
    '`witnessed=true`: the newest checkpoint whose cosignatures met LOG_WITNESS_QUORUM (404 until there is one). ' +
    'The answer says which in `X-Log-Witnessed` (`true` when the quorum was met) and `X-Log-Cosignatures` (how many). ' +
    'A new checkpoint is published within seconds of a new record (at least every 5 s while new records exist). 404 until the log has its first leaf.',
  scopes: Operation.Public,
  query: z.object({ witnessed: z.enum(['true', 'false'], { error: 'must be true or false' }).optional().describe('true: the newest checkpoint that met the witness quorum') }),
  contentType: 'text/plain',
  responses: { 200: z.string() },
  errors: [400, 404, 503],
  parameterExamples: { witnessed: 'true' },
});

export const getInclusionProof = defineRoute({
  method: 'get',
  path: '/v1/log/proof/inclusion',
  tag: 'log',
  summary: 'RFC 9162 inclusion proof of leaf `leaf_index` in the tree of size `tree_size` (a published checkpoint\'s size)',
  scopes: Operation.Public,
  query: z.object({ leaf_index: index('a leaf index'), tree_size: index('a tree size') }),
  responses: {
    200: z.object({
      leaf_index: z.number().int(),
      tree_size: z.number().int(),
      leaf_hash: base64Hash.describe('SHA-256(0x00 ‖ record hash), standard base64'),
      hashes: z.array(base64Hash).describe('the audit path, leaf upwards (RFC 9162 §2.1.3.1)'),
    }),
  },
  errors: [400, 404, 503],
  parameterExamples: { leaf_index: 0, tree_size: 1 },
});

export const getConsistencyProof = defineRoute({
  method: 'get',
  path: '/v1/log/proof/consistency',
  tag: 'log',
  summary: 'RFC 9162 consistency proof from the tree of size `from` to the tree of size `to` (published checkpoints\' sizes)',
  scopes: Operation.Public,
  query: z.object({ from: index('a tree size'), to: index('a tree size') }),
  responses: {
    200: z.object({
      from: z.number().int(),
      to: z.number().int(),
      hashes: z.array(base64Hash).describe('RFC 9162 §2.1.4.1 PROOF(from, D[to])'),
    }),
  },
  errors: [400, 404, 503],
  parameterExamples: { from: 1, to: 1 },
});

export const logRoutes = { getLogKey, getLogCheckpoint, getInclusionProof, getConsistencyProof } as const;
