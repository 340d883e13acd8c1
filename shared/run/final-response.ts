export { replyToRequester } from "../events/final-response";
