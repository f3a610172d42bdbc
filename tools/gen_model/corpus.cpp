// The built-in English text the vocabulary trainer learns its merges from (original text, ASCII).
#include "gen_model/vocab.h"

namespace ork::gen {

namespace {

constexpr std::string_view kCorpus = R"(The old lighthouse stood at the end of a narrow road, where the land gave up and the sea began. Every evening the keeper climbed the stairs, one hundred and twelve of them, and lit the great lamp. Ships far out on the water saw the light turn slowly, once every ten seconds, and they knew where the rocks were hiding.
The keeper kept a small book on the table by the window. In it she wrote the weather, the wind, the number of ships that passed, and sometimes a line about a bird or a cloud. On the first page she had written: "Nothing here is ever the same twice, and nothing here ever really changes."
In the spring the village market opened again. Farmers brought apples, onions, potatoes, carrots and cheese. A baker sold warm bread from a wooden cart, and children ran between the stalls with paper kites. People talked about the long winter, the price of fish, the new school, and the road that the council had promised to repair for the third year in a row.
A computer is a machine that follows instructions. It reads numbers from memory, adds and multiplies them, compares them, and writes the results back. A program is a list of such instructions, written so that a person can read it and a machine can run it. Good programs are short, clear, and tested; they say what they do and they do what they say.
Language models learn to predict the next word in a sentence. They read a great deal of text, count which pieces tend to follow which, and adjust millions of small numbers until their guesses improve. When you give such a model the beginning of a story, it continues the story one token at a time, choosing each new token from the ones it thinks are most likely.
A token is a piece of text: sometimes a whole word, sometimes part of a word, sometimes a single letter or a mark of punctuation. Common words like "the", "and" and "water" usually become one token, while rare or long words are split into several smaller pieces that the model has seen before.
The river ran past the mill, under the stone bridge, and out through the fields toward the sea. In the summer it was slow and warm, full of reeds and small silver fish. In the autumn the rain made it fast and brown, and the miller watched it carefully from his door, counting the days until the water would fall again.
My grandmother grew tomatoes, beans, peppers and herbs in a garden behind the house. She said that a garden teaches patience: you plant, you water, you wait, and you accept whatever the weather decides to give you. She never measured anything, yet her soup tasted exactly the same every time.
Mathematics describes patterns. Two plus two is four, three times three is nine, and the square root of sixteen is four. A matrix is a table of numbers arranged in rows and columns; multiplying a matrix by a vector mixes the numbers of the vector according to the rows of the matrix. Much of modern computing is nothing more than this, repeated very quickly, billions of times each second.
The train left the station at seven in the morning. Passengers read newspapers, drank coffee, looked out of the windows at the hills and the forests, or simply slept. A man in a grey coat was writing a letter to his brother, who lived in a city by the northern mountains and worked as a teacher of history and music.
Memory in a machine is limited, so careful engineers plan where every piece of data will live. Some data stays close to the processor because it is needed often; other data waits in slower storage and is brought in only when it is required. Moving data costs time and energy, so the best designs move as little as possible and reuse what they have already loaded.
At night the town was quiet. A cat walked along the top of a wall, a dog barked twice and then stopped, and somewhere a radio played an old song about the moon. The baker was already awake, mixing flour, water, salt and yeast, and the first light of morning was still hours away.
Questions are the beginning of knowledge. Why is the sky blue? Why does ice float? Where do the birds go in winter? How far away is the nearest star? Each answer leads to another question, and the people who keep asking are the ones who learn the most.
The workshop smelled of oil and wood. On the bench lay a clock that had stopped many years ago, its small brass wheels spread out in careful order on a clean white cloth. The repairman cleaned each wheel, checked each tooth, and put them back one by one. When he finally wound the spring, the clock began to tick, as if it had only been resting.
Children learn to read by listening first. They hear stories, repeat the sounds, recognize letters, and slowly connect the marks on the page to the words they already know. Later they read silently, faster and faster, and the letters disappear behind the meaning, like a window that you no longer notice when you look at the garden outside.
A good recipe for bread needs only four things: flour, water, salt and time. Mix them, fold the dough, let it rise, shape it, let it rise again, and bake it in a very hot oven. The crust should be dark and crisp, and the inside should be soft, light and full of small holes.
The expedition crossed the desert in twelve days. They travelled early in the morning and late in the evening, resting in the shade during the hottest hours. Water was measured carefully, every bottle counted, every drop important. On the last day they saw green trees on the horizon and knew that the river was near.
Numbers can be written in many ways: 1, 2, 3, 10, 42, 100, 256, 1024 and 2048 are all familiar to people who work with computers. Engineers often choose sizes that are powers of two, because memory is addressed in binary and such sizes divide evenly into pages, blocks and rows.
Friendship is built from small things: a shared meal, a letter that arrives on a difficult day, a walk along the beach, a question asked and truly answered. Over the years these small things become a large thing, strong enough to carry both people through times of trouble and times of joy.
The library was open every day except Sunday. Its shelves held books about history, science, travel, cooking, music, animals, the stars and the sea. The librarian knew where every book was, and she could find the right one for any reader, whether they wanted an adventure, a quiet poem or a careful explanation of how engines work.
)";

}  // namespace

std::string_view corpus_text() { return kCorpus; }

}  // namespace ork::gen
