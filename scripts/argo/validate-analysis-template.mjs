// Validates Argo Rollouts AnalysisTemplates read as a JSON array on stdin; prints one line per
// document, "ok" or "invalid: <errors>". The validators are generated from the Argo Rollouts Go
// API types (npm @kubernetes-models/argo-rollouts, MIT), installed by scripts/fetch-argo-schemas.sh.
import { AnalysisTemplate } from "@kubernetes-models/argo-rollouts/argoproj.io/v1alpha1/AnalysisTemplate";

let text = "";
for await (const chunk of process.stdin) text += chunk;
for (const doc of JSON.parse(text)) {
  try {
    new AnalysisTemplate(doc).validate();
    console.log("ok");
  } catch (error) {
    console.log(`invalid: ${String(error.message).replaceAll("\n", " ")}`);
  }
}
