# The release image (built by .goreleaser.yaml from the static binary it
# has already built; nothing is compiled here). distroless/static brings CA
# certificates, for --inspect-images' registry pulls, and nothing else.
# deploy/cronjob.yaml runs it as this same non-root user.
FROM gcr.io/distroless/static:nonroot
ARG TARGETPLATFORM
COPY ${TARGETPLATFORM}/kubegap /kubegap
USER 65532:65532
ENTRYPOINT ["/kubegap"]
