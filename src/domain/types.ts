import type { LimitedAccess } from './access/limited-access.js';

/**
 * The resources of the interface specification, as the domain holds them.
 *
 * The specification marks many fields "not required" and "nullable". The service always
 * answers with every field present: optional values are `null` when unknown and arrays are
 * `[]` when empty (decisions §2). The domain types therefore carry no optional properties.
 */

export interface CodeAndDescription {
  readonly code: string;
  readonly description: string;
}

/** An ISO 8601 date-time with an offset, e.g. `2024-03-01T10:15:00+00:00`, kept as given. */
export type IsoDateTime = string;

export interface PersonCircumstance {
  readonly type: CodeAndDescription;
  readonly subType: CodeAndDescription;
  readonly updatedAt: IsoDateTime;
}

export interface Disability {
  readonly type: CodeAndDescription;
  readonly updatedAt: IsoDateTime;
}

export interface OffenderPersonalityDisorder {
  readonly status: CodeAndDescription;
}

/** Response of `GET /case/{crn}` (operation getCase). */
export interface PersonalDetailsAndCircumstances {
  readonly preferredLanguage: CodeAndDescription | null;
  readonly personalCircumstances: PersonCircumstance[];
  readonly disabilities: Disability[];
  readonly offenderPersonalityDisorder: OffenderPersonalityDisorder | null;
}

/** Response of `GET /case/{crn}/home-office-interest` (operation getHomeOfficeInterest). */
export interface HomeOfficeInterest {
  readonly exists: boolean;
  readonly notes: string | null;
}

export interface Name {
  readonly forename: string;
  readonly middleName: string | null;
  readonly surname: string;
}

export interface CommunityManager {
  readonly name: Name;
  /** The probation delivery unit's name. */
  readonly pdu: string;
  readonly jobRole: string | null;
  readonly emailAddress: string | null;
  readonly officeName: string | null;
  readonly teamPhoneNumber: string | null;
}

/** Response of `GET /case/{crn}/community-manager` (operation getCommunityManagerByCrn). */
export interface CommunityOffenderManager {
  readonly crn: string;
  readonly communityManager: CommunityManager;
}

/** Risk predictor levels (the public gateway's vocabulary). */
export const SCORE_LEVELS = ['LOW', 'MEDIUM', 'HIGH', 'VERY_HIGH', 'NOT_APPLICABLE'] as const;
export type ScoreLevel = (typeof SCORE_LEVELS)[number];

export interface LevelledScore {
  readonly scoreLevel: ScoreLevel | null;
  readonly score: number | null;
}

export interface SexualPredictor {
  readonly indecentScoreLevel: ScoreLevel | null;
  readonly contactScoreLevel: ScoreLevel | null;
  readonly indecentScore: number | null;
  readonly contactScore: number | null;
}

/** One completed risk assessment's predictor scores. */
export interface RiskPredictorScore {
  readonly completedDate: IsoDateTime;
  readonly assessmentStatus: string;
  readonly generalPredictor: LevelledScore;
  readonly violencePredictor: LevelledScore;
  readonly groupReconviction: LevelledScore;
  readonly riskOfSeriousRecidivism: LevelledScore;
  readonly sexualPredictor: SexualPredictor;
}

/**
 * Everything held about one case: what stores import and what fixtures describe.
 * `communityManager` is `null` when the person has no active community manager.
 */
export interface CaseRecord {
  readonly crn: string;
  readonly personalDetails: PersonalDetailsAndCircumstances;
  readonly homeOfficeInterest: HomeOfficeInterest;
  readonly communityManager: CommunityManager | null;
  /** Risk assessments, in any order; `[]` when none. */
  readonly riskScores: RiskPredictorScore[];
  /** The case's limited-access rules (decisions §8); `null` for a case without rules. */
  readonly limitedAccess: LimitedAccess | null;
}

/**
 * What the case store holds about a crn, as stored, in a subject access answer (decisions
 * §22); each part null when not held. Every part is named by the case operation that reads it
 * (`heldAs` in case-operations.ts), and the template shows each.
 */
export interface HeldCase {
  readonly personalDetails: PersonalDetailsAndCircumstances | null;
  readonly homeOfficeInterest: HomeOfficeInterest | null;
  readonly communityManager: CommunityManager | null;
  readonly riskScores: RiskPredictorScore[];
}

/**
 * JSON text that holds a `T`: a document a store keeps as text and the service sends as it
 * is. The type is a promise made by the store that produced it; the case-repository
 * contract suite checks it by parsing.
 */
export type JsonText<T> = string & { readonly __holds?: T };
