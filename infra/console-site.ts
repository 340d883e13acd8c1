/**
 * The web console as an optional static site (construct prop `console`):
 * the files of `console/` in a private S3 bucket behind CloudFront (origin
 * access control), and the REST API behind the same distribution under
 * `/v1/*`, so the page calls the API on its own origin (no CORS). The
 * WebSocket goes straight to the WebSocket API's URL, written next to the
 * page as `console/config.json` (browsers apply no CORS to WebSockets).
 * The user pastes an API key into the page; nothing secret is deployed.
 */
import { Duration, RemovalPolicy } from "aws-cdk-lib";
import {
  AllowedMethods,
  CacheHeaderBehavior,
  CachePolicy,
  CacheQueryStringBehavior,
  Distribution,
  OriginRequestPolicy,
  ViewerProtocolPolicy,
} from "aws-cdk-lib/aws-cloudfront";
import { RestApiOrigin, S3BucketOrigin } from "aws-cdk-lib/aws-cloudfront-origins";
import type { RestApiBase } from "aws-cdk-lib/aws-apigateway";
import { BlockPublicAccess, Bucket, BucketEncryption } from "aws-cdk-lib/aws-s3";
import { BucketDeployment, Source } from "aws-cdk-lib/aws-s3-deployment";
import { Construct } from "constructs";
import { CONSOLE_DIR, CONSOLE_PATH } from "./console-files";

export interface ConsoleSiteProps {
  readonly restApi: RestApiBase;
  readonly webSocketUrl: string;
  readonly removalPolicy: RemovalPolicy;
}

export class ConsoleSite extends Construct {
  readonly url: string;
  readonly distribution: Distribution;

  constructor(scope: Construct, id: string, props: ConsoleSiteProps) {
    super(scope, id);
    const bucket = new Bucket(this, "Bucket", {
      blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
      encryption: BucketEncryption.S3_MANAGED,
      enforceSSL: true,
      removalPolicy: props.removalPolicy,
      autoDeleteObjects: props.removalPolicy === RemovalPolicy.DESTROY,
    });
    this.distribution = new Distribution(this, "Distribution", {
      comment: "agent-runner web console",
      defaultRootObject: `${CONSOLE_PATH}/index.html`,
      defaultBehavior: {
        origin: S3BucketOrigin.withOriginAccessControl(bucket),
        viewerProtocolPolicy: ViewerProtocolPolicy.REDIRECT_TO_HTTPS,
        cachePolicy: CachePolicy.CACHING_OPTIMIZED,
      },
      additionalBehaviors: {
        "/v1/*": {
          origin: new RestApiOrigin(props.restApi),
          viewerProtocolPolicy: ViewerProtocolPolicy.HTTPS_ONLY,
          allowedMethods: AllowedMethods.ALLOW_ALL,
          cachePolicy: apiCachePolicy(this),
          originRequestPolicy: OriginRequestPolicy.ALL_VIEWER_EXCEPT_HOST_HEADER,
        },
      },
    });
    new BucketDeployment(this, "Files", {
      destinationBucket: bucket,
      destinationKeyPrefix: CONSOLE_PATH,
      sources: [Source.asset(CONSOLE_DIR), Source.jsonData("config.json", { webSocketUrl: props.webSocketUrl })],
      distribution: this.distribution,
      distributionPaths: [`/${CONSOLE_PATH}/*`],
    });
    this.url = `https://${this.distribution.distributionDomainName}/${CONSOLE_PATH}/`;
  }
}

/**
 * CloudFront forwards `Authorization` only when it is part of the cache key;
 * the TTLs keep nothing (the API answers `cache-control: no-store` anyway).
 */
function apiCachePolicy(scope: Construct): CachePolicy {
  return new CachePolicy(scope, "ApiCachePolicy", {
    comment: "agent-runner API through the console distribution: forwards Authorization, caches nothing",
    headerBehavior: CacheHeaderBehavior.allowList("Authorization"),
    queryStringBehavior: CacheQueryStringBehavior.all(),
    defaultTtl: Duration.seconds(0),
    minTtl: Duration.seconds(0),
    maxTtl: Duration.seconds(1),
  });
}
